/* upload: perfconv upload's command line (upload/uploadrun.h runs it). */
#include "cli/upload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "cli/convert.h"
#include "upload/backend.h"
#include "upload/uploadrun.h"
#include "upload/watchopts.h"

static void upload_usage(FILE *f)
{
	fprintf(f,
		"usage: perfconv upload --to datadog|pyroscope|parca|otlp [--url URL] [-i FILE]...\n"
		"                       [--service NAME] [--label KEY=VALUE]... [options]\n"
		"       perfconv upload --to ... --watch DIR [--delete-sent] [--max-backlog N|SIZE]\n"
		"                       [--keep-sent SIZE|AGE]\n"
		"\n"
		"Convert each input to pprof shaped for the backend (--for) and send it: one\n"
		"profile per input. Takes every conversion option of perfconv (perfconv --help).\n"
		"\n"
		"      --to BACKEND      datadog: the agent's /profiling/v1/input (default\n"
		"                        http://localhost:8126, $DD_TRACE_AGENT_URL (unix:// too),\n"
		"                        $DD_AGENT_HOST and $DD_TRACE_AGENT_PORT), or with an API\n"
		"                        key the intake of $DD_SITE (default datadoghq.com);\n"
		"                        pyroscope: /ingest (default http://localhost:4040);\n"
		"                        parca: /profiles/writeraw (default http://localhost:7070);\n"
		"                        otlp: OpenTelemetry profiles, OTLP/HTTP protobuf to\n"
		"                        /v1development/profiles (default http://localhost:4318,\n"
		"                        $OTEL_EXPORTER_OTLP_ENDPOINT, or as it is\n"
		"                        $OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT): a Collector,\n"
		"                        Pyroscope...\n"
		"      --url URL         where the backend (or agent) is, without a path\n"
		"      --tenant ID       pyroscope: X-Scope-OrgID\n"
		"      --header NAME=VALUE  otlp: a header of every request (also\n"
		"                        $OTEL_EXPORTER_OTLP_HEADERS, ..._PROFILES_HEADERS: k=v,k=v;\n"
		"                        tokens go there, not on the command line)\n"
		"      --api-key-file FILE  datadog intake: the API key, its first line (else\n"
		"                        $DD_API_KEY; never on the command line)\n"
		"      --allow-http      send over http:// to a host not on loopback (never\n"
		"                        with a secret: an API key, OTLP headers)\n"
		"      --proxy URL       send through this proxy (http:// or https://, no user or\n"
		"                        password): an https:// URL through a CONNECT tunnel;\n"
		"                        an http:// URL only with both on loopback, or with\n"
		"                        --allow-http and no secret. No other proxy is used:\n"
		"                        http_proxy, HTTPS_PROXY, ALL_PROXY are not read\n"
		"      --dry-run         say what would be sent, send nothing; with -o PREFIX\n"
		"                        also write the bodies to PREFIX.* files\n"
		"      --timeout SECONDS one request's limit (default 60)\n"
		"      --retry-cap SECONDS  the longest wait between tries (default 300)\n"
		"      --watch DIR       send each chunk `perf record --switch-output` finishes\n"
		"                        in DIR, oldest first, until SIGINT or SIGTERM; a chunk\n"
		"                        sent (a 2xx) is moved to DIR/sent/, one refused to\n"
		"                        DIR/refused/; each profile spans its chunk's window,\n"
		"                        from the end of the chunk before it to its own\n"
		"      --delete-sent     with --watch: delete a sent chunk instead, and a\n"
		"                        dropped one\n"
		"      --max-backlog N|SIZE  with --watch: past N unsent chunks (500) or SIZE of\n"
		"                        them (512M, 1G: K, M, G, T), the oldest are moved to\n"
		"                        DIR/dropped/, each said (default 1G; 0: no limit)\n"
		"      --keep-sent SIZE|AGE  with --watch: sent/, refused/ and dropped/ each\n"
		"                        pruned, oldest first, past SIZE (1G) or AGE (90s, 30m,\n"
		"                        12h, 7d, 2w); give it twice for both; `all` keeps\n"
		"                        every chunk (default 1G)\n"
		"      --trust-folder    with --watch: send chunks of any owner, mode or number\n"
		"                        of links, and use JIT files beside them of any owner\n"
		"                        (by default: perfconv's user's or root's, writable by\n"
		"                        no one else; docs/UPLOADING.md: Security)\n"
		"  -h, --help            this text\n"
		"\n"
		"Exit status: 0 every profile sent (or watching stopped), 1 one was refused or\n"
		"could not be sent, or an input is bad, 2 usage.\n");
}

int upload_main(int argc, char **argv)
{
	static const struct option own[] = {
		{ "to", required_argument, NULL, OPT_TO },
		{ "url", required_argument, NULL, OPT_URL },
		{ "tenant", required_argument, NULL, OPT_TENANT },
		{ "api-key-file", required_argument, NULL, OPT_API_KEY_FILE },
		{ "allow-http", no_argument, NULL, OPT_ALLOW_HTTP },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "delete-sent", no_argument, NULL, OPT_DELETE_SENT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "retry-cap", required_argument, NULL, OPT_RETRY_CAP },
		{ "max-backlog", required_argument, NULL, OPT_MAX_BACKLOG },
		{ "keep-sent", required_argument, NULL, OPT_KEEP_SENT },
		{ "trust-folder", no_argument, NULL, OPT_TRUST_FOLDER },
		{ "proxy", required_argument, NULL, OPT_PROXY },
		{ "header", required_argument, NULL, OPT_HEADER },
	};
	static const struct option conv[] = { CONVERT_OPTIONS };
	struct option opts[sizeof(own) / sizeof(own[0]) + sizeof(conv) / sizeof(conv[0]) + 1];
	struct upload_options uo;
	struct watch_options wopt;
	struct cli c;
	struct diag d;
	const char **inputs = NULL, **headers = NULL;
	size_t ninputs = 0, inputs_cap = 0, headers_cap = 0;
	int opt, w, rc = 0, dry_run = 0, backlog_set = 0, keep_set = 0;

	memcpy(opts, own, sizeof(own));
	memcpy(opts + sizeof(own) / sizeof(own[0]), conv, sizeof(conv));
	memset(&opts[sizeof(opts) / sizeof(opts[0]) - 1], 0, sizeof(opts[0]));
	memset(&uo, 0, sizeof(uo));
	memset(&wopt, 0, sizeof(wopt));
	wopt.max_bytes = WATCH_MAX_BACKLOG_DEFAULT;
	wopt.keep_bytes = WATCH_KEEP_DEFAULT;
	cli_init(&c);
	c.output = NULL;
	diag_init(&d);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:o:f:qh", opts, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (opt) {
		case '?':
		case ':':
			rc = getopt_error(opt, argv);
			goto out;
		case 'h':
			upload_usage(stdout);
			goto out;
		case 'i': VEC_PUSH(inputs, ninputs, inputs_cap, optarg); continue;
		case 'f':
			rc = bad_usage("perfconv upload sends pprof: no -f", optarg);
			goto out;
		case OPT_FOR:
			rc = bad_usage("perfconv upload shapes the pprof for --to's backend: no --for", NULL);
			goto out;
		case OPT_TO:
			uo.backend = backend_by_name(optarg);
			if (!uo.backend) {
				rc = bad_usage("--to takes datadog, pyroscope, parca or otlp", optarg);
				goto out;
			}
			continue;
		case OPT_URL: uo.url = optarg; continue;
		case OPT_PROXY: uo.proxy = optarg; continue;
		case OPT_HEADER: VEC_PUSH(headers, uo.nheaders, headers_cap, optarg); continue;
		case OPT_TENANT: uo.tenant = optarg; continue;
		case OPT_API_KEY_FILE:
			/* getopt takes a prefix: "--api-key KEY" must not pass for a file name
			 * (the key would then be shown in an error) */
			if (strncmp(argv[optind - 1], "--api-key-file", 14) != 0 &&
			    strncmp(argv[optind - 2 >= 0 ? optind - 2 : 0], "--api-key-file", 14) != 0) {
				rc = bad_usage("the API key comes from DD_API_KEY or --api-key-file FILE, "
					       "never the command line", NULL);
				goto out;
			}
			uo.api_key_file = optarg;
			continue;
		case OPT_ALLOW_HTTP: uo.allow_http = 1; continue;
		case OPT_DRY_RUN: dry_run = 1; continue;
		case OPT_WATCH: wopt.dir = optarg; continue;
		case OPT_DELETE_SENT: wopt.delete_sent = 1; continue;
		case OPT_TRUST_FOLDER: wopt.trust_folder = 1; continue;
		case OPT_MAX_BACKLOG:
			if (watch_parse_backlog(optarg, &wopt.max_chunks, &wopt.max_bytes) != 0) {
				rc = bad_usage("--max-backlog takes a number of chunks (500), a size "
					       "(512M, 1G) or 0", optarg);
				goto out;
			}
			backlog_set = 1;
			continue;
		case OPT_KEEP_SENT: {
			uint64_t bytes = 0;
			int64_t age = 0;

			if (watch_parse_keep(optarg, &bytes, &age) != 0) {
				rc = bad_usage("--keep-sent takes a size (1G, 512M), an age (7d, 12h, "
					       "30m) or all", optarg);
				goto out;
			}
			/* given, it replaces the default; a size and an age both hold */
			if (!keep_set++)
				wopt.keep_bytes = 0;
			if (strcmp(optarg, "all") == 0) {
				wopt.keep_bytes = 0;
				wopt.keep_age_s = 0;
			} else if (bytes) {
				wopt.keep_bytes = bytes;
			} else {
				wopt.keep_age_s = age;
			}
			continue;
		}
		case OPT_TIMEOUT:
		case OPT_RETRY_CAP:
			v = strtoul(optarg, &end, 10);
			if (*end || end == optarg || v == 0 || v > 86400) {
				rc = bad_usage("takes a number of seconds, 1 to 86400", optarg);
				goto out;
			}
			if (opt == OPT_TIMEOUT)
				uo.timeout_s = (long)v;
			else
				uo.retry_cap_s = (unsigned)v;
			continue;
		}
		if ((w = convert_option(&c, opt, optarg)) != 0) {
			rc = w == 2 ? 2 : bad_usage("unknown option", NULL);
			goto out;
		}
	}
	if (optind < argc) {
		rc = bad_usage("unexpected argument", argv[optind]);
		goto out;
	}
	if (!uo.backend) {
		rc = bad_usage("perfconv upload needs --to datadog|pyroscope|parca|otlp", NULL);
		goto out;
	}
	if (uo.nheaders && uo.backend != BACKEND_OTLP) {
		rc = bad_usage("--header goes with --to otlp", NULL);
		goto out;
	}
	uo.headers = headers;
	if (wopt.dir && (ninputs || dry_run)) {
		rc = bad_usage("--watch takes its inputs from DIR: no -i or --dry-run", NULL);
		goto out;
	}
	if ((wopt.delete_sent || backlog_set || keep_set || wopt.trust_folder) && !wopt.dir) {
		rc = bad_usage("--delete-sent, --max-backlog, --keep-sent and --trust-folder go "
			       "with --watch", NULL);
		goto out;
	}
	if (wopt.dir && c.cv.meta.start_time_set) {
		rc = bad_usage("--start-time is one recording's start: each chunk of --watch has "
			       "its own", NULL);
		goto out;
	}
	if (c.output && !dry_run) {
		rc = bad_usage("perfconv upload writes no file: -o goes with --dry-run", NULL);
		goto out;
	}
	if (!ninputs)
		VEC_PUSH(inputs, ninputs, inputs_cap, "perf.data");
	c.cv.pprof_for = backend_pprof_for(uo.backend);
	c.cv.upload = 1;
	uo.quiet = c.cv.co.quiet;
	if (cli_finish(&c, &d) != 0) {
		rc = 1;
		goto out;
	}
	{
		const struct upload_run_options ro = { &uo, &wopt, inputs, ninputs, dry_run,
						       c.output };

		rc = upload_run(&c.cv, &ro, &d);
	}
out:
	diag_release(&d);
	free(inputs);
	free(headers);
	cli_release(&c);
	return rc;
}

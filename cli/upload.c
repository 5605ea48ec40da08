/* upload: perfconv upload's command line (upload/uploadrun.h runs it). */
#include "cli/upload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "common/util.h"
#include "upload/backend.h"
#include "upload/uploadrun.h"
#include "upload/watchopts.h"

/* --to's paragraph: each backend's row's, in the table's order. */
static void to_usage(FILE *f)
{
	const char *indent = "      --to BACKEND      ";

	for (size_t i = 0; backends[i]; i++)
		for (const char *s = backends[i]->usage; *s;) {
			size_t n = strcspn(s, "\n");

			fprintf(f, "%s%.*s\n", indent, (int)n, s);
			indent = "                        ";
			s += n + (s[n] == '\n');
		}
}

static void upload_usage(FILE *f)
{
	char names[128];

	backend_names(names, sizeof(names), "|", "|", 0);
	fprintf(f, "usage: perfconv upload --to %s [--url URL] [-i FILE]...\n", names);
	fputs("                       [--service NAME] [--label KEY=VALUE]... [options]\n"
		"       perfconv upload --to ... --watch DIR [--delete-sent] [--max-backlog N|SIZE]\n"
		"                       [--keep-sent SIZE|AGE]\n"
		"\n"
		"Convert each input to pprof shaped for the backend (--for) and send it: one\n"
		"profile per input. Takes every conversion option of perfconv (perfconv --help).\n"
		"\n", f);
	to_usage(f);
	fputs("      --url URL         where the backend (or agent) is, without a path\n"
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
		"could not be sent, or an input is bad, 2 usage.\n", f);
}

/* What perfconv upload's options fill. */
struct upload_cli {
	struct cli c;
	struct upload_options uo;
	struct watch_options wopt;
	const char **inputs, **headers;
	size_t ninputs, inputs_cap, headers_cap;
	int dry_run, backlog_set, keep_set;
};

/* --keep-sent: given, it replaces the default; a size and an age both hold. */
static enum opt_take keep_sent(struct upload_cli *uc, const char *arg)
{
	uint64_t bytes = 0;
	int64_t age = 0;

	if (watch_parse_keep(arg, &bytes, &age) != 0)
		return take_bad("--keep-sent takes a size (1G, 512M), an age (7d, 12h, 30m) or all",
				 arg);
	if (!uc->keep_set++)
		uc->wopt.keep_bytes = 0;
	if (strcmp(arg, "all") == 0) {
		uc->wopt.keep_bytes = 0;
		uc->wopt.keep_age_s = 0;
	} else if (bytes) {
		uc->wopt.keep_bytes = bytes;
	} else {
		uc->wopt.keep_age_s = age;
	}
	return TAKE_OK;
}

/* upload's options: its own, and a conversion's but -f and --for. */
static enum opt_take upload_take(void *ctx, int id, const char *arg, char **argv)
{
	struct upload_cli *uc = ctx;
	char *end;
	unsigned long v;

	switch (id) {
	case 'i': VEC_PUSH(uc->inputs, uc->ninputs, uc->inputs_cap, arg); return TAKE_OK;
	case 'f': return take_bad("perfconv upload sends pprof: no -f", arg);
	case OPT_FOR:
		return take_bad("perfconv upload shapes the pprof for --to's backend: no --for", NULL);
	case OPT_TO:
		uc->uo.backend = backend_by_name(arg);
		if (!uc->uo.backend) {
			char names[128], msg[160];

			backend_names(names, sizeof(names), ", ", " or ", 0);
			snprintf(msg, sizeof(msg), "--to takes %s", names);
			return take_bad(msg, arg);
		}
		return TAKE_OK;
	case OPT_URL: uc->uo.url = arg; return TAKE_OK;
	case OPT_PROXY: uc->uo.proxy = arg; return TAKE_OK;
	case OPT_HEADER: VEC_PUSH(uc->headers, uc->uo.nheaders, uc->headers_cap, arg); return TAKE_OK;
	case OPT_TENANT: uc->uo.tenant = arg; return TAKE_OK;
	case OPT_API_KEY_FILE:
		/* getopt takes a prefix: "--api-key KEY" must not pass for a file name (the
		 * key would then be shown in an error) */
		if (strncmp(argv[optind - 1], "--api-key-file", 14) != 0 &&
		    strncmp(argv[optind - 2 >= 0 ? optind - 2 : 0], "--api-key-file", 14) != 0)
			return take_bad("the API key comes from DD_API_KEY or --api-key-file FILE, "
					 "never the command line", NULL);
		uc->uo.api_key_file = arg;
		return TAKE_OK;
	case OPT_ALLOW_HTTP: uc->uo.allow_http = 1; return TAKE_OK;
	case OPT_DRY_RUN: uc->dry_run = 1; return TAKE_OK;
	case OPT_WATCH: uc->wopt.dir = arg; return TAKE_OK;
	case OPT_DELETE_SENT: uc->wopt.delete_sent = 1; return TAKE_OK;
	case OPT_TRUST_FOLDER: uc->wopt.trust_folder = 1; return TAKE_OK;
	case OPT_MAX_BACKLOG:
		if (watch_parse_backlog(arg, &uc->wopt.max_chunks, &uc->wopt.max_bytes) != 0)
			return take_bad("--max-backlog takes a number of chunks (500), a size "
					 "(512M, 1G) or 0", arg);
		uc->backlog_set = 1;
		return TAKE_OK;
	case OPT_KEEP_SENT: return keep_sent(uc, arg);
	case OPT_TIMEOUT:
	case OPT_RETRY_CAP:
		v = strtoul(arg, &end, 10);
		if (*end || end == arg || v == 0 || v > 86400)
			return take_bad("takes a number of seconds, 1 to 86400", arg);
		if (id == OPT_TIMEOUT)
			uc->uo.timeout_s = (long)v;
		else
			uc->uo.retry_cap_s = (unsigned)v;
		return TAKE_OK;
	default: return convert_option(&uc->c, id, arg);
	}
}

/* The options that go together, after all are read: 0, or 2 after saying which do not. */
static int upload_check(struct upload_cli *uc, int argc, char **argv)
{
	const struct watch_options *w = &uc->wopt;
	char names[128], msg[160];

	if (optind < argc)
		return bad_usage("unexpected argument", argv[optind]);
	if (!uc->uo.backend) {
		backend_names(names, sizeof(names), "|", "|", 0);
		snprintf(msg, sizeof(msg), "perfconv upload needs --to %s", names);
		return bad_usage(msg, NULL);
	}
	if (uc->uo.nheaders && !backend_of(uc->uo.backend)->headers) {
		backend_names(names, sizeof(names), ", ", " or ", 1);
		snprintf(msg, sizeof(msg), "--header goes with --to %s", names);
		return bad_usage(msg, NULL);
	}
	if (w->dir && (uc->ninputs || uc->dry_run))
		return bad_usage("--watch takes its inputs from DIR: no -i or --dry-run", NULL);
	if ((w->delete_sent || uc->backlog_set || uc->keep_set || w->trust_folder) && !w->dir)
		return bad_usage("--delete-sent, --max-backlog, --keep-sent and --trust-folder go "
				 "with --watch", NULL);
	if (w->dir && uc->c.cv.meta.start_time_set)
		return bad_usage("--start-time is one recording's start: each chunk of --watch has "
				 "its own", NULL);
	if (uc->c.output && !uc->dry_run)
		return bad_usage("perfconv upload writes no file: -o goes with --dry-run", NULL);
	return 0;
}

int upload_main(int argc, char **argv)
{
	struct upload_cli uc;
	const struct cli_parse cp = { CMD_UPLOAD, upload_usage, 0, upload_take, &uc };
	struct cli *const c = &uc.c;
	struct diag d;
	int rc = 0;

	memset(&uc, 0, sizeof(uc));
	uc.wopt.max_bytes = WATCH_MAX_BACKLOG_DEFAULT;
	uc.wopt.keep_bytes = WATCH_KEEP_DEFAULT;
	cli_init(c);
	c->output = NULL;
	diag_init(&d);
	if (cli_parse(&cp, argc, argv, &rc) != CLI_PARSED ||
	    (rc = upload_check(&uc, argc, argv)) != 0)
		goto out;
	uc.uo.headers = uc.headers;
	if (!uc.ninputs)
		VEC_PUSH(uc.inputs, uc.ninputs, uc.inputs_cap, "perf.data");
	c->cv.pprof_for = backend_pprof_for(uc.uo.backend);
	c->cv.upload = 1;
	uc.uo.quiet = c->cv.co.quiet;
	if (cli_finish(c, &d) != 0) {
		rc = 1;
	} else {
		const struct upload_run_options ro = { &uc.uo, &uc.wopt, uc.inputs, uc.ninputs,
						       uc.dry_run, c->output };

		rc = upload_run(&c->cv, &ro, &d);
	}
out:
	diag_release(&d);
	free(uc.inputs);
	free(uc.headers);
	cli_release(c);
	return rc;
}

/* datadog: Datadog's request, as its own profilers send it (docs/BACKENDS.md): to the
 * agent's /profiling/v1/input, or with an API key to the intake of $DD_SITE, a
 * multipart/form-data of event.json (libdatadog's ProfileExporter::build, version 4, with
 * ddprof's tags) and the gzipped pprof. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "common/version.h"
#include "convert/labels.h"
#include "formats/write/pprof.h"
#include "upload/backend.h"

#define DD_AGENT_DEFAULT "http://localhost:8126"
#define DD_AGENT_PATH "/profiling/v1/input"
#define DD_INTAKE_PATH "/api/v2/profile"

/* Datadog without a key: the agent's URL from the environment. */
static const char *agent_url(char *buf, size_t cap)
{
	const char *url = getenv("DD_TRACE_AGENT_URL"), *host = getenv("DD_AGENT_HOST");
	const char *port = getenv("DD_TRACE_AGENT_PORT");

	if (url && url[0])
		return url;
	if (host && host[0]) {
		int v6 = strchr(host, ':') != NULL;

		snprintf(buf, cap, "http://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "",
			 port && port[0] ? port : "8126");
		return buf;
	}
	return DD_AGENT_DEFAULT;
}

static void dd_endpoint(const struct upload_options *o, int key, char *buf, size_t cap,
			const char **base, const char **path, int *intake)
{
	*intake = key;
	if (key) {
		const char *site = getenv("DD_SITE");

		snprintf(buf, cap, "https://intake.profile.%s", site && site[0] ? site : "datadoghq.com");
		*base = o->url ? o->url : buf;
		*path = DD_INTAKE_PATH;
	} else {
		*base = o->url ? o->url : agent_url(buf, cap);
		*path = DD_AGENT_PATH;
	}
}

/* Datadog's event.json (libdatadog's ProfileExporter::build, version 4). */
static char *dd_event(const struct upload_profile *p)
{
	cJSON *ev = cJSON_CreateObject(), *att = cJSON_AddArrayToObject(ev, "attachments");
	cJSON *info, *platform, *profiler;
	char start[40], end[40], tag[512], val[256];
	struct strbuf tags = STRBUF_INIT;
	char *out;

	cJSON_AddItemToArray(att, cJSON_CreateString("profile.pprof"));
#define TAG(k, v)                                                                       \
	do {                                                                            \
		upload_tag_value(val, sizeof(val), (v));                                      \
		snprintf(tag, sizeof(tag), "%s%s:%s", tags.len ? "," : "", (k), val);  \
		strbuf_addstr(&tags, tag);                                              \
	} while (0)
	TAG("service", upload_service(p));
	for (size_t i = 0; i < p->nlabels; i++)
		if (strcmp(p->labels[i].key, "service") != 0)
			TAG(p->labels[i].key, p->labels[i].value);
	TAG("language", "native");
	if (p->runtimes && p->runtimes[0]) {
		char one[64];

		for (const char *r = p->runtimes; *r;) {
			size_t n = strcspn(r, ",");

			snprintf(one, sizeof(one), "%.*s", (int)(n < 63 ? n : 63), r);
			TAG("runtime", one);
			r += n + (r[n] == ',');
		}
	} else {
		TAG("runtime", "native");
	}
	TAG("runtime_os", "linux");
	TAG("format", "pprof");
	TAG("profiler_version", "perfconv-" PERFCONV_VERSION);
	if (p->runtime_id)
		TAG("runtime-id", p->runtime_id);
	if (p->seq >= 0) {
		char seq[24];

		snprintf(seq, sizeof(seq), "%lld", (long long)p->seq);
		TAG("profile_seq", seq);
	}
	{
		/* as libdatadog: its build's Rust target triple, here the recording's
		 * machine's; and ddprof's cpu_arch */
		const char *arch = p->arch && p->arch[0] ? p->arch : upload_host_arch();
		char triple[96];

		if (strcmp(arch, "x86_64") == 0 || strcmp(arch, "aarch64") == 0)
			TAG("cpu_arch", arch[0] == 'x' ? "amd64" : "arm64");
		snprintf(triple, sizeof(triple), "%s-unknown-linux-gnu", arch);
		TAG("runtime_platform", triple);
	}
#undef TAG
	cJSON_AddStringToObject(ev, "tags_profiler", tags.s);
	meta_rfc3339(p->start_ns, start, sizeof(start));
	meta_rfc3339(p->start_ns + p->duration_ns, end, sizeof(end));
	cJSON_AddStringToObject(ev, "start", start);
	cJSON_AddStringToObject(ev, "end", end);
	cJSON_AddStringToObject(ev, "family", "native");
	cJSON_AddStringToObject(ev, "version", "4");
	info = cJSON_AddObjectToObject(ev, "info");
	platform = cJSON_AddObjectToObject(info, "platform");
	if (p->host && p->host[0])
		cJSON_AddStringToObject(platform, "hostname", p->host);
	cJSON_AddStringToObject(platform, "kernel_name", "Linux");
	if (p->kernel_release && p->kernel_release[0])
		cJSON_AddStringToObject(platform, "kernel_release", p->kernel_release);
	profiler = cJSON_AddObjectToObject(info, "profiler");
	cJSON_AddStringToObject(profiler, "name", "perfconv");
	cJSON_AddStringToObject(profiler, "version", PERFCONV_VERSION);
	out = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	strbuf_release(&tags);
	return out;
}

static void dd_request(const struct backend_ctx *c, const struct upload_profile *p,
		       struct backend_request *rq)
{
	rq->owned = dd_event(p);
	/* "intake does not look for filename=event.json, it looks for name=event" */
	rq->parts[0] = (struct backend_part){ "event", "event.json", "application/json", rq->owned,
					      strlen(rq->owned) };
	rq->parts[1] = (struct backend_part){ "profile.pprof", "profile.pprof",
					      "application/octet-stream", p->pprof, p->len };
	rq->nparts = 2;
	rq->headers[rq->nheaders++] = upload_header("DD-EVP-ORIGIN", "perfconv");
	rq->headers[rq->nheaders++] = upload_header("DD-EVP-ORIGIN-VERSION", PERFCONV_VERSION);
	if (c->intake && c->api_key) {
		rq->secret |= 1u << rq->nheaders;
		rq->headers[rq->nheaders++] = upload_header("DD-API-KEY", c->api_key);
	}
}

const struct backend_ops backend_datadog = {
	.id = BACKEND_DATADOG,
	.name = "datadog",
	.default_url = DD_AGENT_DEFAULT,
	.usage = "datadog: the agent's /profiling/v1/input (default\n"
		 DD_AGENT_DEFAULT ", $DD_TRACE_AGENT_URL (unix:// too),\n"
		 "$DD_AGENT_HOST and $DD_TRACE_AGENT_PORT), or with an API\n"
		 "key the intake of $DD_SITE (default datadoghq.com);",
	.format = "pprof",
	.pprof_for = PPROF_FOR_DATADOG,
	.keeps_key = 1,
	.unix_socket = 1,
	.endpoint = dd_endpoint,
	.request = dd_request,
	/* libdatadog: the backend skips "a profile larger than 10 MiB"; whether gzipped
	 * or not is unstated, so the larger (not gzipped) is held under it */
	.limits = { 10ULL << 20, 0, "Datadog skips a profile over 10 MiB", NULL },
};

/* uploadbody: what each backend's request carries, made from a profile: Datadog's
 * event.json (libdatadog's ProfileExporter::build, version 4), Parca's WriteRawRequest
 * as the gateway's JSON, and the tag and label values both take. */
#include "convert/uploadbody.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/version.h"
#include "convert/labels.h"

#define DEFAULT_SERVICE "perfconv"

/* The machine perfconv was built for, as uname -m names it. */
const char *upload_host_arch(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#elif defined(__i386__)
	return "i686";
#else
	return "unknown";
#endif
}

/* A value that came from the recording, made safe for a name or tag list. */
void upload_tag_value(char *dst, size_t cap, const char *v)
{
	size_t n = 0;

	for (; *v && n + 1 < cap; v++, n++)
		dst[n] = ((unsigned char)*v < 0x20 || *v == ',' || *v == '{' || *v == '}') ? '_' : *v;
	dst[n] = '\0';
}

const char *upload_service(const struct upload_profile *p)
{
	return p->service ? p->service : DEFAULT_SERVICE;
}

/* Datadog's event.json (libdatadog's ProfileExporter::build, version 4). */
char *upload_dd_event(const struct upload_profile *p)
{
	cJSON *ev = cJSON_CreateObject(), *att = cJSON_AddArrayToObject(ev, "attachments");
	cJSON *info, *platform, *profiler;
	char start[40], end[40], tag[512], val[256];
	size_t cap = 1024, len = 0;
	char *tags = xmalloc(cap), *out;

	cJSON_AddItemToArray(att, cJSON_CreateString("profile.pprof"));
	tags[0] = '\0';
#define TAG(k, v)                                                                       \
	do {                                                                            \
		upload_tag_value(val, sizeof(val), (v));                                      \
		snprintf(tag, sizeof(tag), "%s%s:%s", len ? "," : "", (k), val);       \
		if (len + strlen(tag) + 1 > cap)                                        \
			grow_array((void **)&tags, &cap, len + strlen(tag) + 1, 1);     \
		strcpy(tags + len, tag);                                                \
		len += strlen(tag);                                                     \
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
	cJSON_AddStringToObject(ev, "tags_profiler", tags);
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
	free(tags);
	return out;
}

static char *base64(const uint8_t *in, size_t n)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc(4 * ((n + 2) / 3) + 1), *o = out;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		*o++ = tbl[v >> 18 & 63];
		*o++ = tbl[v >> 12 & 63];
		*o++ = i + 1 < n ? tbl[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tbl[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static void add_label(cJSON *arr, const char *name, const char *value)
{
	cJSON *l = cJSON_CreateObject();

	cJSON_AddStringToObject(l, "name", name);
	cJSON_AddStringToObject(l, "value", value);
	cJSON_AddItemToArray(arr, l);
}

/* Parca's WriteRawRequest as the gateway's JSON. */
char *upload_parca_body(const struct upload_profile *p)
{
	cJSON *req = cJSON_CreateObject(), *series = cJSON_AddArrayToObject(req, "series");
	cJSON *s = cJSON_CreateObject(), *ls = cJSON_AddObjectToObject(s, "labels");
	cJSON *arr = cJSON_AddArrayToObject(ls, "labels");
	cJSON *samples = cJSON_AddArrayToObject(s, "samples"), *raw = cJSON_CreateObject();
	char *b64 = base64(p->pprof, p->len), *out;

	add_label(arr, "__name__", p->name && p->name[0] ? p->name : "process_cpu");
	add_label(arr, "service", upload_service(p));
	for (size_t i = 0; i < p->nlabels; i++)
		if (strcmp(p->labels[i].key, "service") != 0)
			add_label(arr, p->labels[i].key, p->labels[i].value);
	cJSON_AddStringToObject(raw, "raw_profile", b64);
	cJSON_AddItemToArray(samples, raw);
	cJSON_AddItemToArray(series, s);
	cJSON_AddBoolToObject(req, "normalized", 0);
	out = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	free(b64);
	return out;
}

/* parca: Parca's /profiles/writeraw, its ProfileStore's HTTP rule: the JSON of a
 * WriteRawRequest, the series labels and the pprof in base64 (docs/BACKENDS.md). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "formats/write/pprof.h"
#include "upload/backend.h"

#define PARCA_DEFAULT "http://localhost:7070"

static void parca_endpoint(const struct upload_options *o, int key, char *buf, size_t cap,
			   const char **base, const char **path, int *intake)
{
	(void)key, (void)buf, (void)cap;
	*intake = 0;
	*base = o->url ? o->url : PARCA_DEFAULT;
	*path = "/profiles/writeraw";
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
static char *parca_body(const struct upload_profile *p)
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

static void parca_request(const struct backend_ctx *c, const struct upload_profile *p,
			  struct backend_request *rq)
{
	(void)c;
	rq->owned = parca_body(p);
	rq->content_type = "application/json";
	rq->body = rq->owned;
	rq->len = strlen(rq->owned);
	rq->body_what = "JSON";
	rq->body_suffix = "json";
}

const struct backend_ops backend_parca = {
	.id = BACKEND_PARCA,
	.name = "parca",
	.default_url = PARCA_DEFAULT,
	.usage = "parca: /profiles/writeraw (default " PARCA_DEFAULT ");",
	.format = "pprof",
	.pprof_for = PPROF_FOR_PARCA,
	.endpoint = parca_endpoint,
	.request = parca_request,
};

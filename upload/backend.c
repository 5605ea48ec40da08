/* backend: the backends by id and name, and what their requests share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "formats/write/pprof.h"
#include "upload/backend.h"

#define DEFAULT_SERVICE "perfconv"

const struct backend_ops *const backends[] = { &backend_datadog, &backend_pyroscope,
					       &backend_parca, &backend_otlp, NULL };

const struct backend_ops *backend_of(int backend)
{
	for (size_t i = 0; backends[i]; i++)
		if (backends[i]->id == backend)
			return backends[i];
	return NULL;
}

int backend_by_name(const char *name)
{
	for (size_t i = 0; backends[i]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i]->id;
	return 0;
}

const char *backend_name(int backend)
{
	const struct backend_ops *b = backend_of(backend);

	return b ? b->name : "";
}

void backend_names(char *buf, size_t cap, const char *sep, const char *last, int headers_only)
{
	size_t n = 0, k = 0, len = 0;

	for (size_t i = 0; backends[i]; i++)
		n += !headers_only || backends[i]->headers;
	buf[0] = '\0';
	for (size_t i = 0; backends[i] && len < cap; i++) {
		if (headers_only && !backends[i]->headers)
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", !k ? "" : k + 1 < n ? sep : last,
					backends[i]->name);
		k++;
	}
}

int backend_pprof_for(int backend)
{
	const struct backend_ops *b = backend_of(backend);

	return b ? b->pprof_for : PPROF_FOR_NONE;
}

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

char *upload_url_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(3 * strlen(s) + 1), *o = out;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

char *upload_header(const char *name, const char *value)
{
	char *h = xmalloc(strlen(name) + strlen(value) + 3);

	sprintf(h, "%s: %s", name, value);
	return h;
}

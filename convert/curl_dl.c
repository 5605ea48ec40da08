/*
 * curl_dl: libcurl opened when an upload first calls it, not linked into perfconv.
 *
 * Linking libcurl made every run load it and the 27 libraries it needs (TLS, Kerberos,
 * LDAP, SSH, ...) and run their constructors: `perfconv --version` took 6.5 ms of CPU
 * time with it, 2.0 ms without, where a warm conversion of the committed frame-pointer
 * recording takes 17 ms. Only `perfconv upload` and `--watch` use libcurl, so the
 * functions convert/upload.c calls are defined here: the first call opens
 * libcurl.so.4 (Debian's libcurl4) and each one forwards to libcurl's own. A function
 * upload.c starts to call without a forwarder here fails to link.
 */
#define CURL_DISABLE_TYPECHECK /* the functions, not gcc's checking macros */
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define LIBCURL "libcurl.so.4"

/*
 * libcurl's function `name`, libcurl opened by the first call (and kept: that first
 * reference is never given back). No state of its own: the dynamic linker's list of
 * loaded objects is where "opened already" is kept; a later call's dlopen only finds
 * it there (and its reference is given back at once). A libcurl that cannot be opened,
 * or lacks the function, is fatal.
 */
static void *fn(const char *name)
{
	void *lib = dlopen(LIBCURL, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD), *f;
	int again = lib != NULL;

	if (!lib)
		lib = dlopen(LIBCURL, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "perfconv: uploading needs libcurl (Debian's libcurl4): %s\n",
			dlerror());
		exit(1);
	}
	f = dlsym(lib, name);
	if (!f) {
		fprintf(stderr, "perfconv: %s has no %s: %s\n", LIBCURL, name, dlerror());
		exit(1);
	}
	if (again)
		dlclose(lib);
	return f;
}

/* `real`: libcurl's function `name` (of the type curl.h declares for it). */
#define REAL(name) \
	__typeof__(&name) real; \
	*(void **)&real = fn(#name)

CURL *curl_easy_init(void)
{
	REAL(curl_easy_init);
	return real();
}

/* One argument, read by the option's type as libcurl reads it (curl.h's CURLOPTTYPE_
 * ranges): long, object pointer, function pointer, curl_off_t, blob pointer. */
CURLcode curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
	typedef void (*any_fn)(void);
	va_list ap;
	CURLcode rc;
	REAL(curl_easy_setopt);


	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = real(c, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		rc = real(c, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = real(c, opt, va_arg(ap, any_fn));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = real(c, opt, va_arg(ap, curl_off_t));
	else
		rc = real(c, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO takes a pointer to where the answer goes. */
CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	va_list ap;
	void *p;
	REAL(curl_easy_getinfo);

	va_start(ap, info);
	p = va_arg(ap, void *);
	va_end(ap);
	return real(c, info, p);
}

CURLcode curl_easy_perform(CURL *c)
{
	REAL(curl_easy_perform);
	return real(c);
}

void curl_easy_cleanup(CURL *c)
{
	REAL(curl_easy_cleanup);
	real(c);
}

void curl_easy_reset(CURL *c)
{
	REAL(curl_easy_reset);
	real(c);
}

const char *curl_easy_strerror(CURLcode code)
{
	REAL(curl_easy_strerror);
	return real(code);
}

char *curl_easy_escape(CURL *c, const char *s, int len)
{
	REAL(curl_easy_escape);
	return real(c, s, len);
}

void curl_free(void *p)
{
	REAL(curl_free);
	real(p);
}

curl_mime *curl_mime_init(CURL *c)
{
	REAL(curl_mime_init);
	return real(c);
}

void curl_mime_free(curl_mime *m)
{
	REAL(curl_mime_free);
	real(m);
}

curl_mimepart *curl_mime_addpart(curl_mime *m)
{
	REAL(curl_mime_addpart);
	return real(m);
}

CURLcode curl_mime_name(curl_mimepart *part, const char *name)
{
	REAL(curl_mime_name);
	return real(part, name);
}

CURLcode curl_mime_filename(curl_mimepart *part, const char *name)
{
	REAL(curl_mime_filename);
	return real(part, name);
}

CURLcode curl_mime_type(curl_mimepart *part, const char *type)
{
	REAL(curl_mime_type);
	return real(part, type);
}

CURLcode curl_mime_data(curl_mimepart *part, const char *data, size_t size)
{
	REAL(curl_mime_data);
	return real(part, data, size);
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
	REAL(curl_slist_append);
	return real(l, s);
}

void curl_slist_free_all(struct curl_slist *l)
{
	REAL(curl_slist_free_all);
	real(l);
}

CURLU *curl_url(void)
{
	REAL(curl_url);
	return real();
}

void curl_url_cleanup(CURLU *u)
{
	REAL(curl_url_cleanup);
	real(u);
}

CURLUcode curl_url_get(CURLU *u, CURLUPart what, char **part, unsigned int flags)
{
	REAL(curl_url_get);
	return real(u, what, part, flags);
}

CURLUcode curl_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags)
{
	REAL(curl_url_set);
	return real(u, what, part, flags);
}

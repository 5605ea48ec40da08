/* demangle: the one rule for showing C++ and Rust names, for native and JIT code alike. */
#include "common/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "common/util.h"

char *demangle_name(const char *name)
{
	static const char plt[] = "@plt";
	size_t len, sl = sizeof(plt) - 1;
	char *base, *d, *out;

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	len = strlen(name);
	if (len <= sl || strcmp(name + len - sl, plt) != 0)
		return cplus_demangle(name, DMGL_AUTO);
	/* a PLT entry (elfsyms names them NAME@plt): libiberty drops the suffix, perf
	 * shows it after the demangled name */
	base = xstrndup(name, len - sl);
	d = cplus_demangle(base, DMGL_AUTO);
	free(base);
	if (!d)
		return NULL;
	out = xmalloc(strlen(d) + sl + 1);
	sprintf(out, "%s%s", d, plt);
	free(d);
	return out;
}

/* demangle: the one rule for showing C++ and Rust names, for native and JIT code alike. */
#include "common/demangle.h"

#include <stddef.h>
#include <libiberty/demangle.h>

char *demangle_name(const char *name)
{
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_AUTO);
}

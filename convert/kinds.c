/* kinds: the table of the kinds of record pass 2 of a conversion takes. */
#include "convert/kinds.h"

const struct sample_kind *const sample_kinds[] = {
	&oncpu_kind,
	NULL,
};

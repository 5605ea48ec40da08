/* uploadbody: what each backend's request carries, made from a profile: Datadog's
 * event.json, Parca's WriteRawRequest as the gateway's JSON, and the tag and label
 * values both take. */
#ifndef PERFCONV_UPLOADBODY_H
#define PERFCONV_UPLOADBODY_H

#include <stddef.h>

#include "convert/upload.h"

/* `v` (a value that came from the recording) made safe for a name or a tag list: a
 * control character, ',', '{' and '}' become '_'; cut to cap - 1 bytes. */
void upload_tag_value(char *dst, size_t cap, const char *v);
/* The machine perfconv was built for, as uname -m names it ("x86_64"). */
const char *upload_host_arch(void);
/* The profile's service, or the default one ("perfconv"). */
const char *upload_service(const struct upload_profile *p);
/* Datadog's event.json for `p`: a string the caller frees with cJSON_free. */
char *upload_dd_event(const struct upload_profile *p);
/* Parca's WriteRawRequest for `p`, the pprof in base64: freed with cJSON_free. */
char *upload_parca_body(const struct upload_profile *p);

#endif

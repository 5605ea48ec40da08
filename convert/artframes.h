/* artframes: ART's own frames hidden from a simpleperf recording's stacks, as
 * simpleperf's report shows them. */
#ifndef PERFCONV_ARTFRAMES_H
#define PERFCONV_ARTFRAMES_H

#include "formats/model/profile.h"
#include "formats/read/simpleperf.h"

/*
 * Rewrite p's stacks as simpleperf's CallChainReportBuilder does (AOSP system/extras,
 * simpleperf/report_utils.cpp), after every frame is named:
 * - the runtime's frames (libart.so, libartd.so, *jni_trampoline) next to a Java
 *   frame, with only such frames between, are hidden (the interpreter, the calls into
 *   and out of compiled code); but the function an art_jni_trampoline calls is a JNI
 *   method and stays;
 * - a JIT frame called by the interpreted frame of the same method (on-stack
 *   replacement: ART goes from a method's interpreted frame into its compiled code)
 *   is dropped, so that the method does not call itself.
 * A Java frame is one of a dex file (FILE's type, `si`) or of a JIT region (a path with
 * "_jit_app_cache:", "_jit_zygote_cache:", or a base name "TemporaryFile").
 */
void artframes_hide(struct profile *p, const struct sp_info *si);

#endif

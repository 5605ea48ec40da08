/* altlink: a dwz'd debug file's supplement (.gnu_debugaltlink), found and opened by
 * perfconv for libdw, never by libdw itself. */
#ifndef PERFCONV_ALTLINK_H
#define PERFCONV_ALTLINK_H

#include <elfutils/libdw.h>

/* The supplement set for a Dwarf: the caller keeps it until after that Dwarf's end. */
struct alt_file {
	int fd;       /* -1: none */
	Elf *elf;
	Dwarf *dw;
	char *image;  /* the stand-in's bytes (see altlink_attach), or NULL */
};

/*
 * Set the supplement of `dw` (read from the file `dw_path`: a debug file or the object
 * itself) that its .gnu_debugaltlink names, as dwz -m makes them for Debian's and
 * Fedora's -dbgsym files: first `given` (a descriptor debuginfod gave, or -1; taken
 * over), then [/usr/lib/debug]/.build-id/xx/rest.debug of its build id, then the path it
 * names (relative to the directory of `dw_path`). Each is opened without waiting and
 * must be a regular file with that build id; one another user can write is read from a
 * private copy (common/mapfile.h: file_open_steady).
 *
 * When none will do, an empty stand-in is set in its place: libdw, asked for a DIE or a
 * string in a supplement it was not given, looks for it itself, opening the path
 * blocking (a FIFO there hung the conversion for good) and mapping the file. The
 * frames the supplement would name are then without them.
 *
 * Returns 0 (`dw` names no supplement, or it was found), or 1 with *why (malloc'ed)
 * saying which file was not used and why. `alt` is filled either way; release it with
 * altlink_release() after dwarf_end(dw) (or the Dwfl's end).
 */
int altlink_attach(Dwarf *dw, const char *dw_path, int given, struct alt_file *alt, char **why);
void altlink_release(struct alt_file *alt);

#endif

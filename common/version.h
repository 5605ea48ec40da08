/* version: perfconv's version, as --version and the outputs' exporter fields say it. */
#ifndef PERFCONV_VERSION_H
#define PERFCONV_VERSION_H

#define PERFCONV_VERSION "0.1.0"

#endif

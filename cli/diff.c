/* diff: perfconv diff BASE NEW, two recordings converted alike into one
 * differential profile (issue 36).
 *
 * Each side is converted by the same pipeline and options as `perfconv` would convert
 * it, then both go into one profile, each sample marked with its side
 * (convert/merge.h); writers compare stacks by their text (function names, and lines
 * with --srcline), never addresses, so that two builds of a program compare.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/diff.h"

#include "cli/options.h"
#include "convert/merge.h"

/* A format of a differential profile (OF_DIFF) named `name`, or NULL. */
static const struct output_format *diff_format_by_name(const char *name)
{
	for (size_t i = 0; output_formats[i]; i++)
		if ((output_formats[i]->flags & OF_DIFF) && strcmp(output_formats[i]->name, name) == 0)
			return output_formats[i];
	return NULL;
}

/* The format of a differential profile whose suffix ends `path`, or NULL: diff's own
 * first (".top.txt" before folded's ".txt"). */
static const struct output_format *diff_format_by_path(const char *path)
{
	size_t len = strlen(path);
	const struct output_format *of;

	for (size_t i = 0; output_formats[i]; i++) {
		of = output_formats[i];
		for (size_t j = 0; (of->flags & OF_DIFF_ONLY) && of->suffixes[j]; j++) {
			size_t sl = strlen(of->suffixes[j]);

			if (len > sl && strcmp(path + len - sl, of->suffixes[j]) == 0)
				return of;
		}
	}
	of = output_by_path(path);
	return of && (of->flags & OF_DIFF) ? of : NULL;
}

static void diff_usage(FILE *f)
{
	fprintf(f,
		"usage: perfconv diff BASE NEW [-o OUTPUT] [-f FORMAT] [options]\n"
		"\n"
		"Compare two recordings (each a perf.data file or a `perf record --threads`\n"
		"directory), converted alike, by their stacks' function names (and lines with\n"
		"--srcline), not addresses: two builds of a program compare. Each side's\n"
		"weights are taken as shares of its own total and BASE's are scaled to NEW's\n"
		"total (as FlameGraph's difffolded.pl -n), unless --absolute.\n"
		"\n"
		"  -o, --output FILE     output file, or - for standard output (the default)\n"
		"  -f, --format FORMAT   folded: \"stack BASE NEW\" lines, as difffolded.pl writes\n"
		"                        them (flamegraph.pl, inferno-flamegraph); top: the\n"
		"                        functions whose self and total shares changed most;\n"
		"                        pprof: NEW's samples and BASE's negated, labelled\n"
		"                        side=new or side=base (go tool pprof -top, -tagfocus);\n"
		"                        svg: NEW's flame graph, each frame red where its share\n"
		"                        grew, blue where it shrank, BASE's own frames dashed.\n"
		"                        Default: from -o's suffix (.folded, .top, .pb.gz, .svg);\n"
		"                        to a terminal top, else folded\n"
		"      --absolute        raw weights, not scaled: what changed in count\n"
		"      --top N           top: the N functions that changed most (default 20;\n"
		"                        0 for all)\n"
		"  -q, --quiet           no closing summary\n"
		"  -h, --help            this text\n"
		"\n"
		"Every option of a conversion but -i applies to both sides alike (perfconv\n"
		"--help): --event, --time, --weight, --srcline, --pid, --comm, --symfs, ...\n"
		"Samples are compared by count, or by period (nanoseconds) with --weight period\n"
		"and when both sides are CPU clock events recorded at different frequencies.\n");
}

/* The event of `name` (a string of `from`) in `p`, or NULL. */
static const struct pc_event *event_named(const struct profile *p, const struct profile *from,
					  uint32_t name)
{
	const char *want = profile_text(from, name);

	for (size_t i = 0; i < p->nevents; i++)
		if (strcmp(profile_text(p, p->events[i].name), want) == 0)
			return &p->events[i];
	return NULL;
}

/* The rate an event was sampled at, for the summary: "999 Hz", "period 10000". */
static void rate_text(const struct pc_event *e, char *buf, size_t size)
{
	snprintf(buf, size, e->freq ? "%llu Hz" : "period %llu", (unsigned long long)e->sample_period);
}

/* Each side's totals of event `ev` (-1: any): count [0] and period [1]. */
static void side_totals(const struct profile *p, int ev, double base[2], double new[2])
{
	base[0] = base[1] = new[0] = new[1] = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		double *t = s->side == PC_SIDE_BASE ? base : new;

		if (ev >= 0 && s->event != ev)
			continue;
		t[0] += (double)s->count;
		t[1] += (double)s->period;
	}
}

/* Convert both sides into `p` (initialized), each marked with its side. 0, or -1
 * after saying why. */
static int convert_sides(struct cli *c, const struct output_format *of, struct profile *p,
			 struct profile side[2], struct diag *d)
{
	struct convert_stats st;

	output_shape_profile(of, p);
	for (int k = 0; k < 2; k++) {
		output_shape_profile(of, &side[k]);
		c->cv.co.input = c->cv.inputs[k];
		if (!c->cv.co.quiet)
			diag_note(d, "%s (%s):", c->cv.inputs[k], k ? "new" : "base");
		if (convert_read(&c->cv.co, &side[k], &st, d, &c->cv.later) != 0)
			return -1;
		merge_side(p, &side[k], k ? PC_SIDE_NEW : PC_SIDE_BASE);
	}
	return 0;
}

/*
 * The event and weight shown, and how BASE is scaled (wd->scale), said in one line
 * per side unless quiet. 0, or -1 after saying that a side has nothing to compare.
 */
static int diff_scale(struct cli *c, const struct output_format *of, const struct profile *p,
		      const struct profile side[2], int absolute, struct write_diff *wd,
		      struct diag *d)
{
	double base[2], new[2];
	int ev;
	const char *evname;
	const struct pc_event *eb = NULL, *en = NULL;
	char rb[48] = "", rn[48] = "";

	c->cv.wo.event = -1;
	if (c->cv.time) {
		if (choose_time(p, c->cv.time, &c->cv.wo, d) != 0)
			return -1;
		if (!c->cv.weight_set)
			c->cv.wo.weight_period = 1;
	} else if (choose_event(p, of, c->cv.event, &c->cv.wo, c->cv.co.quiet, d) != 0) {
		return -1;
	} else if (!c->cv.weight_set) {
		c->cv.wo.weight_period = of->weight_period;
	}
	/* the event the scale is of: the one shown, else (pprof: every event) the first
	 * with samples */
	ev = c->cv.wo.event;
	for (size_t i = 0; ev < 0 && i < p->nevents; i++)
		if (p->events[i].nsamples)
			ev = (int)i;
	if (ev < 0) {
		diag_error(d, NULL, DIAG_NO_OFFSET, "no samples in either recording");
		return -1;
	}
	evname = profile_text(p, p->events[ev].name);
	eb = event_named(&side[0], p, p->events[ev].name);
	en = event_named(&side[1], p, p->events[ev].name);
	if (eb)
		rate_text(eb, rb, sizeof(rb));
	if (en)
		rate_text(en, rn, sizeof(rn));
	/* samples of a clock at different rates stand for different times: compared by
	 * their periods, nanoseconds, they compare */
	if (!c->cv.weight_set && !c->cv.wo.weight_period && eb && en && eb->is_clock && en->is_clock &&
	    (eb->freq != en->freq || eb->sample_period != en->sample_period)) {
		c->cv.wo.weight_period = 1;
		if (!c->cv.co.quiet)
			diag_note(d, "%s at %s in BASE and %s in NEW: compared by period (ns)",
				  evname, rb, rn);
	}
	side_totals(p, ev, base, new);
	if (!(base[0] > 0) || !(new[0] > 0)) {
		diag_error(d, c->cv.inputs[base[0] > 0 ? 1 : 0], DIAG_NO_OFFSET,
			   "no samples of %s to compare", evname);
		return -1;
	}
	wd->scale[0] = absolute ? 1.0 : new[0] / base[0];
	wd->scale[1] = absolute || !(base[1] > 0) ? 1.0 : new[1] / base[1];
	if (!c->cv.co.quiet) {
		int w = c->cv.wo.weight_period;
		const char *unit = w ? (profile_event_unit(p, ev) == PC_UNIT_NANOSECONDS ? "ns"
					: pc_unit_name(profile_event_unit(p, ev)))
				     : "samples";

		if (absolute)
			diag_note(d, "base: %s: %.0f %s of %s, as recorded (--absolute)",
				  c->cv.inputs[0], base[w], unit, evname);
		else
			diag_note(d, "base: %s: %.0f %s of %s, scaled by %.6g to NEW's total "
				  "(each stack's share of BASE times NEW's total)",
				  c->cv.inputs[0], base[w], unit, evname, wd->scale[w]);
		diag_note(d, "new: %s: %.0f %s of %s, as recorded", c->cv.inputs[1], new[w], unit,
			  evname);
	}
	return 0;
}

/* Both inputs there before the first is converted (which takes a while): 0, or -1
 * after saying which is not. */
static int inputs_exist(const struct cli *c, struct diag *d)
{
	for (size_t k = 0; k < 2; k++)
		if (strcmp(c->cv.inputs[k], "-") != 0 && access(c->cv.inputs[k], R_OK) != 0) {
			diag_error(d, c->cv.inputs[k], DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
			return -1;
		}
	return 0;
}

/* What perfconv diff's own options fill. */
struct diff_cli {
	struct cli c;
	struct write_diff wd;
	int absolute;
};

/* diff's options: its own, and a conversion's but -i and --version. */
static enum opt_take diff_take(void *ctx, int id, const char *arg, char **argv)
{
	struct diff_cli *dc = ctx;

	(void)argv;
	switch (id) {
	case 'i': return take_bad("diff takes BASE and NEW as arguments, not -i", arg);
	case OPT_ABSOLUTE: dc->absolute = 1; return TAKE_OK;
	case OPT_DIFF_TOP: {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (*end || end == arg || v > 1000000)
			return take_bad("--top takes a number of functions (0: all)", arg);
		dc->wd.top = (unsigned)v;
		return TAKE_OK;
	}
	case OPT_VERSION: return take_bad("--version is perfconv's, not diff's", NULL);
	default: return convert_option(&dc->c, id, arg);
	}
}

int diff_main(int argc, char **argv)
{
	struct diff_cli dc;
	const struct cli_parse cp = { CMD_DIFF, diff_usage, 0, diff_take, &dc };
	struct cli *const c = &dc.c;
	struct profile p, side[2];
	struct diag d;
	const struct output_format *of = NULL;
	int rc = 0, w;

	cli_init(c);
	diag_init(&d);
	memset(&dc.wd, 0, sizeof(dc.wd));
	dc.wd.top = 20;
	dc.absolute = 0;
	profile_init(&p);
	profile_init(&side[0]);
	profile_init(&side[1]);
	if (cli_parse(&cp, argc, argv, &rc) != CLI_PARSED)
		goto out;
	for (; optind < argc; optind++)
		VEC_PUSH(c->cv.inputs, c->cv.ninputs, c->cv.inputs_cap, argv[optind]);
	if (c->cv.ninputs != 2) {
		rc = bad_usage("diff takes two recordings, BASE and NEW", NULL);
		goto out;
	}
	if (strcmp(c->cv.inputs[0], "-") == 0 && strcmp(c->cv.inputs[1], "-") == 0) {
		rc = bad_usage("only one side can be read from standard input", NULL);
		goto out;
	}
	if (c->cv.pprof_for > 0 || c->cv.meta.service || c->cv.meta.nlabels ||
	    c->cv.meta.start_time_set) {
		rc = bad_usage("--for, --service, --label and --start-time are not for diff", NULL);
		goto out;
	}
	if (c->format && !(of = diff_format_by_name(c->format))) {
		char names[128], msg[256];

		cli_format_list(names, sizeof(names), OF_DIFF, 0, " or ");
		snprintf(msg, sizeof(msg), "diff writes %s", names);
		rc = bad_usage(msg, c->format);
		goto out;
	}
	if (!of && strcmp(c->output, "-") != 0)
		of = diff_format_by_path(c->output);
	if (!of)
		of = diff_format_by_name(strcmp(c->output, "-") == 0 && isatty(STDOUT_FILENO) ?
					 "top" : "folded");
	if (strcmp(c->output, "-") == 0 && isatty(STDOUT_FILENO) && (of->flags & OF_PROTOBUF)) {
		char names[128], msg[256];
		size_t n = cli_format_list(names, sizeof(names), OF_DIFF | OF_PROTOBUF, 0, " and ");

		snprintf(msg, sizeof(msg), "%s %s protobuf, not for a terminal: give -o FILE", names,
			 n > 1 ? "are" : "is");
		rc = bad_usage(msg, NULL);
		goto out;
	}
	dc.wd.base_name = c->cv.inputs[0];
	dc.wd.new_name = c->cv.inputs[1];
	if (inputs_exist(c, &d) != 0 || cli_finish(c, &d) != 0 ||
	    output_check_not_input(c->output, c->cv.inputs[0], &d) != 0 ||
	    output_check_not_input(c->output, c->cv.inputs[1], &d) != 0 ||
	    output_check_writable(c->output, &d) != 0)
		rc = 1;
	else if (convert_sides(c, of, &p, side, &d) != 0)
		rc = 1;
	else if (diff_scale(c, of, &p, side, dc.absolute, &dc.wd, &d) != 0)
		rc = 1;
	if (rc == 0) {
		profile_release(&side[0]);
		profile_release(&side[1]);
		profile_init(&side[0]);
		profile_init(&side[1]);
		c->cv.wo.diff = &dc.wd;
		if ((w = output_write(of, &p, &c->cv.wo, c->output, &d)) != OUTPUT_WRITTEN)
			rc = w == OUTPUT_BROKEN_PIPE ? 128 + SIGPIPE : 1;
	}
out:
	profile_release(&side[0]);
	profile_release(&side[1]);
	profile_release(&p);
	cli_release(c);
	return rc;
}

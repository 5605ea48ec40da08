/* svg: an interactive flame graph in one self-contained SVG file.
 *
 * Format: SVG 1.1 (www.w3.org/TR/SVG11); the layout and the interaction follow
 * github.com/brendangregg/FlameGraph flamegraph.pl (frames as <g><title/><rect/>
 * <text/></g>, widths by share, narrow frames left out as its --minwidth does).
 */
#include "formats/write/svg.h"

#include "common/version.h"
#include "common/writeend.h"
#include "formats/write/frametext.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { KIND_PROCESS = 4, KIND_ROOT = 5 };

#define PAD 10.0
#define HEADER 66.0
#define FOOTER 36.0
#define FRAME_H 16.0
#define CHAR_W 7.2 /* 12px monospace: 0.6em a character */

/* One stack prefix: a frame of the graph. A child's id is above its parent's. */
struct tnode {
	uint32_t parent, text;
	uint32_t module, file;     /* the profile's string ids */
	uint32_t line_lo, line_hi; /* 0 when unknown */
	uint32_t first_child, nchildren;
	uint32_t depth;
	uint8_t kind;
	uint64_t weight;           /* what its width shows */
	/* a differential profile's: NEW's weight, BASE's scaled (o->diff->scale); weight is
	 * then NEW's, or BASE's where NEW has none, widened to hold its children */
	uint64_t nw;
	double base;
};

struct tree {
	struct strtab names;       /* frame texts, owned here */
	struct tnode *nodes;
	size_t n, cap;
	struct u64map index;       /* hash(parent, text) -> node */
	uint32_t *children;        /* by parent: nodes[i].first_child .. + nchildren */
};

static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t text, uint8_t kind)
{
	uint64_t key = hash_u64(((uint64_t)parent << 32) | text) | 1;
	struct tnode nd;
	uint32_t *v;

	for (;; key = hash_u64(key) | 1) {
		v = u64map_get(&t->index, key);
		if (!v)
			break;
		if (t->nodes[*v].parent == parent && t->nodes[*v].text == text)
			return *v;
	}
	memset(&nd, 0, sizeof(nd));
	nd.parent = parent;
	nd.text = text;
	nd.kind = kind;
	nd.depth = t->nodes[parent].depth + 1;
	VEC_PUSH(t->nodes, t->n, t->cap, nd);
	u64map_put(&t->index, key, (uint32_t)t->n - 1);
	return (uint32_t)t->n - 1;
}

static int child_cmp(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return strcmp(strtab_str(&t->names, t->nodes[x].text), strtab_str(&t->names, t->nodes[y].text));
}

/* Children lists, each in name order (as flamegraph.pl sorts stacks). */
static void tree_link(struct tree *t)
{
	uint32_t *fill;

	t->children = xcalloc(t->n ? t->n : 1, sizeof(*t->children));
	for (size_t i = 1; i < t->n; i++)
		t->nodes[t->nodes[i].parent].nchildren++;
	for (size_t i = 0, at = 0; i < t->n; i++) {
		t->nodes[i].first_child = (uint32_t)at;
		at += t->nodes[i].nchildren;
	}
	fill = xcalloc(t->n ? t->n : 1, sizeof(*fill));
	for (size_t i = 1; i < t->n; i++) {
		uint32_t par = t->nodes[i].parent;

		t->children[t->nodes[par].first_child + fill[par]++] = (uint32_t)i;
	}
	free(fill);
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].nchildren > 1)
			qsort_r(t->children + t->nodes[i].first_child, t->nodes[i].nchildren,
				sizeof(uint32_t), child_cmp, t);
}

/*
 * A differential graph's widths: NEW's shape, and where NEW has none of a frame,
 * BASE's (scaled), so that what went away still shows; each frame at least as wide
 * as its children (children's ids are above their parent's: done leaves first).
 */
static void diff_widths(struct tree *t)
{
	uint64_t *kids = xcalloc(t->n ? t->n : 1, sizeof(*kids));

	for (size_t i = t->n; i-- > 0;) {
		struct tnode *nd = &t->nodes[i];
		uint64_t own;

		nd->nw = nd->weight;
		own = nd->nw ? nd->nw : (uint64_t)llround(nd->base);
		nd->weight = own > kids[i] ? own : kids[i];
		if (i)
			kids[nd->parent] += nd->weight;
	}
	free(kids);
}

/* The frames of the samples, as folded output names them. */
static void tree_build(struct tree *t, const struct profile *p, const struct write_options *o)
{
	uint32_t *ftext = xcalloc(p->nframes ? p->nframes : 1, sizeof(*ftext));
	uint32_t *frames = NULL;
	size_t frames_cap = 0;
	char text[4096], *label = NULL;
	size_t label_cap = 0;
	struct tnode root;

	memset(&root, 0, sizeof(root));
	root.kind = KIND_ROOT;
	strtab_init(&t->names);
	u64map_init(&t->index);
	root.text = strtab_intern(&t->names, "all");
	VEC_PUSH(t->nodes, t->n, t->cap, root);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		uint64_t w = sample_weight(o, s);
		int base = o->diff && s->side == PC_SIDE_BASE;
		double bw = base ? diff_weight(o, s) : 0;
		uint32_t node;
		size_t n;

		if (o->event >= 0 && s->event != o->event)
			continue;
		if (base)
			w = 0;
		t->nodes[0].weight += w;
		t->nodes[0].base += bw;
		node = tree_child(t, 0, strtab_intern(&t->names, root_label_all(p, o, s->comm, s->pid,
						s->tid, &label, &label_cap)), KIND_PROCESS);
		t->nodes[node].weight += w;
		t->nodes[node].base += bw;
		/* every frame, however deep (as folded output keeps them) */
		n = profile_stack_all(p, s->stack, &frames, &frames_cap);
		while (n-- > 0) {
			const struct pc_frame *f = &p->frames[frames[n]];
			struct tnode *nd;

			if (!ftext[frames[n]]) {
				frame_text(p, f, o, text, sizeof(text));
				ftext[frames[n]] = strtab_intern(&t->names, text) + 1;
			}
			node = tree_child(t, node, ftext[frames[n]] - 1, f->kind);
			nd = &t->nodes[node];
			nd->weight += w;
			nd->base += bw;
			if (!nd->module)
				nd->module = f->module;
			if (!nd->file)
				nd->file = f->file;
			if (f->line && f->file == nd->file) {
				if (!nd->line_lo || f->line < nd->line_lo)
					nd->line_lo = f->line;
				if (f->line > nd->line_hi)
					nd->line_hi = f->line;
			}
		}
	}
	free(ftext);
	free(label);
	free(frames);
	if (o->diff)
		diff_widths(t);
	tree_link(t);
}

static void tree_release(struct tree *t)
{
	strtab_release(&t->names);
	u64map_release(&t->index);
	free(t->nodes);
	free(t->children);
}

/* The UTF-8 sequence at NUL-terminated `s`: its length when well-formed, else 0, and
 * *adv the bytes it takes (an ill-formed part is one U+FFFD, as in the other writers). */
static size_t utf8_seq(const unsigned char *s, size_t *adv)
{
	size_t n, bad = 1;

	if (s[0] < 0x80)
		return *adv = 1;
	n = utf8_seq_len(s, strnlen((const char *)s, 4), &bad);
	*adv = n ? n : bad;
	return n;
}

/*
 * `s` as XML character data, at most `max` characters (code points; SIZE_MAX: all):
 * a longer text is cut to max - 2 and "..". Markup characters are escaped, control
 * characters (not allowed in XML) become spaces, ill-formed UTF-8 U+FFFD.
 */
static void xml_text(FILE *out, const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t count = 0, keep = max;

	for (const unsigned char *c = u; *c; count++) {
		size_t adv;

		utf8_seq(c, &adv);
		c += adv;
	}
	if (count > max)
		keep = max >= 2 ? max - 2 : 0;
	for (size_t i = 0; *u && i < keep; i++) {
		size_t adv, n = utf8_seq(u, &adv);

		if (!n || (n == 3 && u[0] == 0xef && u[1] == 0xbf && u[2] >= 0xbe)) {
			/* ill-formed, or U+FFFE/U+FFFF, which XML 1.0 has no place for */
			fputs("\xef\xbf\xbd", out);
			u += n ? n : adv;
			continue;
		}
		switch (*u) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if (*u < 0x20 && *u != '\n')
				fputc(' ', out);
			else
				fwrite(u, 1, n, out);
		}
		u += n;
	}
	if (count > max)
		fputs("..", out);
}

/* Characters of a label that fit `w` pixels; the same rule as the script's label(). */
static size_t label_fit(double w)
{
	double n = floor((w - 6) / CHAR_W);

	return n < 3 ? 0 : (size_t)n;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* A colour by kind, varied within the kind's range by the name's hash, so that the
 * same function has the same colour in every graph; blues for off-CPU time (as
 * flamegraph.pl's --colors=io), so that waiting is not taken for running. */
static void frame_colour(uint8_t kind, const char *name, int offcpu, char out[8])
{
	uint32_t h = fnv1a(name);
	double a = (h & 0xff) / 255.0, b = ((h >> 8) & 0xff) / 255.0, c = ((h >> 16) & 0xff) / 255.0;
	int r, g, bl;

	if (offcpu && kind != KIND_PROCESS && kind != KIND_ROOT) {
		switch (kind) {
		case FRAME_KERNEL: r = 110 + (int)(40 * a); g = 110 + (int)(40 * b); bl = 210 + (int)(45 * c); break;
		case FRAME_JIT: r = 40 + (int)(30 * a); g = 160 + (int)(40 * b); bl = 180 + (int)(50 * c); break;
		case FRAME_INLINED: r = 70 + (int)(40 * a); g = 140 + (int)(50 * b); bl = 200 + (int)(50 * c); break;
		default: r = 40 + (int)(40 * a); g = 90 + (int)(60 * b); bl = 190 + (int)(60 * c); break;
		}
		snprintf(out, 8, "#%02x%02x%02x", r, g, bl);
		return;
	}
	switch (kind) {
	case FRAME_KERNEL: r = 225 + (int)(30 * a); g = 150 + (int)(60 * b); bl = (int)(50 * c); break;
	case FRAME_JIT: r = 50 + (int)(60 * a); g = 190 + (int)(55 * b); bl = 50 + (int)(60 * c); break;
	case FRAME_INLINED: r = 50 + (int)(60 * a); g = 165 + (int)(55 * b); bl = 165 + (int)(55 * c); break;
	case KIND_PROCESS:
	case KIND_ROOT: r = g = bl = 185 + (int)(30 * a); break;
	default: r = 200 + (int)(55 * a); g = 40 + (int)(80 * b); bl = 40 + (int)(50 * c); break;
	}
	snprintf(out, 8, "#%02x%02x%02x", r, g, bl);
}

static const char *kind_word(uint8_t kind)
{
	switch (kind) {
	case FRAME_KERNEL: return "kernel";
	case FRAME_JIT: return "JIT";
	case FRAME_INLINED: return "inlined";
	case KIND_PROCESS: return "thread";
	case KIND_ROOT: return "every sample";
	default: return "native";
	}
}

/* The event the graph shows, or NULL when the samples span several. */
static const struct pc_event *shown_event(const struct profile *p, const struct write_options *o)
{
	const struct pc_event *e = NULL;

	if (o->event >= 0 && (size_t)o->event < p->nevents)
		return &p->events[o->event];
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].nsamples) {
			if (e)
				return NULL;
			e = &p->events[i];
		}
	return e;
}

/*
 * The script: details on hover, zoom on click, search (a frame matches when its name
 * holds the term as text or matches it as a regular expression). Frames are the children of
 * #frames in depth-first order; each is <g><title/><rect/>[<text/>]</g>. What it
 * reads of a frame is what the file shows without it: the rectangle's place and the
 * title's first line (the name) and second ("N UNIT (P%)").
 */
static const char script[] =
	"var NS='http://www.w3.org/2000/svg',fr,details,matched,unzoombtn,searchbtn,all=[],"
	"total=0,zoomed=null,searching=null;\n"
	"function depthOf(y){return INV?Math.round((y-TOP)/FH):Math.round((TOP-y)/FH);}\n"
	"function init(){fr=document.getElementById('frames');details=document.getElementById('details');"
	"matched=document.getElementById('matched');unzoombtn=document.getElementById('unzoom');"
	"searchbtn=document.getElementById('search');\n"
	" for(var g=fr.firstElementChild;g;g=g.nextElementSibling){var r=g.children[1],t=g.children[0].textContent,"
	"l=t.split('\\n');g._x=+r.getAttribute('x');g._w=+r.getAttribute('width');g._y=+r.getAttribute('y');"
	"g._d=depthOf(g._y);g._fill=r.getAttribute('fill');g._name=l[0];g._n=parseInt(l[1],10);g._info=l[1];all.push(g);}\n"
	" if(all.length)total=all[0]._n;\n"
	/* a graph taller than the window opens on its root, not on the empty space above
	 * the few deep stacks */
	" if(!INV){var se=document.scrollingElement||document.documentElement;if(se.scrollHeight>window.innerHeight)se.scrollTop=se.scrollHeight;}\n"
	" fr.addEventListener('click',function(e){var g=frameOf(e.target);if(g)zoom(g);});\n"
	" fr.addEventListener('mouseover',function(e){var g=frameOf(e.target);if(g)details.textContent=g._name+': '+g._info;});\n"
	" fr.addEventListener('mouseout',function(){details.textContent=' ';});\n"
	" unzoombtn.addEventListener('click',unzoom);\n"
	" searchbtn.addEventListener('click',function(){if(searching)search('');else searchPrompt();});\n"
	" window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.key=='f'){e.preventDefault();searchPrompt();}"
	"else if(e.key=='Escape'){unzoom();search('');}});\n"
	" var q=new URLSearchParams(location.search);if(q.get('s'))search(q.get('s'));}\n"
	"function frameOf(n){while(n&&n!==fr){if(n.parentNode===fr)return n;n=n.parentNode;}return null;}\n"
	"function label(g,x,w){var t=g.children[2],n=Math.floor((w-6)/CW);"
	"if(n<3){if(t)t.textContent='';return;}\n"
	" if(!t){t=document.createElementNS(NS,'text');t.setAttribute('y',(g._y+11.5).toString());g.appendChild(t);}\n"
	" t.setAttribute('x',(x+3).toFixed(2));var c=Array.from(g._name);"
	"t.textContent=c.length<=n?g._name:c.slice(0,n-2).join('')+'..';}\n"
	"function place(g,x,w,par){g.classList.remove('hide');if(par)g.classList.add('par');else g.classList.remove('par');"
	"var r=g.children[1];r.setAttribute('x',x.toFixed(2));r.setAttribute('width',w.toFixed(2));label(g,x,w);}\n"
	"function zoom(z){var full=W-2*PAD,s=full/z._w;zoomed=z;unzoombtn.classList.remove('hide');\n"
	" for(var i=0;i<all.length;i++){var g=all[i];\n"
	"  if(g._d<z._d){if(g._x<=z._x+EPS&&g._x+g._w>=z._x+z._w-EPS)place(g,PAD,full,1);else g.classList.add('hide');}\n"
	"  else if(g._x>=z._x-EPS&&g._x+g._w<=z._x+z._w+EPS)place(g,PAD+(g._x-z._x)*s,g._w*s,0);\n"
	"  else g.classList.add('hide');}}\n"
	"function unzoom(){zoomed=null;unzoombtn.classList.add('hide');"
	"for(var i=0;i<all.length;i++)place(all[i],all[i]._x,all[i]._w,0);}\n"
	"function searchPrompt(){var t=prompt('Search for (a regular expression, or text)',searching||'');if(t!==null)search(t);}\n"
	"function search(term){var i,re,hits=[],sum=0,end=-1e300;\n"
	" for(i=0;i<all.length;i++)all[i].children[1].setAttribute('fill',all[i]._fill);\n"
	" if(!term){searching=null;matched.textContent=' ';searchbtn.textContent='Search';return;}\n"
	" try{re=new RegExp(term);}catch(x){re=null;}\n"
	" for(i=0;i<all.length;i++)if(all[i]._name.indexOf(term)>=0||(re&&re.test(all[i]._name))){all[i].children[1].setAttribute('fill','#e600e6');hits.push(all[i]);}\n"
	" hits.sort(function(a,b){return a._x-b._x||a._d-b._d;});\n"
	" for(i=0;i<hits.length;i++)if(hits[i]._x>=end-EPS){sum+=hits[i]._n;end=hits[i]._x+hits[i]._w;}\n"
	" searching=term;searchbtn.textContent='Reset Search';\n"
	" matched.textContent='Matched: '+(total?100*sum/total:0).toFixed(2)+'% ('+sum+' of '+total+' '+UNIT+')';}\n";

struct layout {
	const struct tree *t;
	int diff;                 /* a differential graph: coloured by change of share */
	double max_change;        /* its largest change of share, for the colour scale */
	double scale, minwidth, top;
	int inverted, decimals;
	int offcpu;               /* the off-CPU palette */
	size_t drawn, left_out, maxdepth;
	uint32_t *subtree;
};

/* A frame's share of BASE's total and of NEW's, in percent. */
static double diff_share_base(const struct tree *t, const struct tnode *nd)
{
	return t->nodes[0].base > 0 ? 100.0 * nd->base / t->nodes[0].base : 0;
}

static double diff_share_new(const struct tree *t, const struct tnode *nd)
{
	return t->nodes[0].nw ? 100.0 * (double)nd->nw / (double)t->nodes[0].nw : 0;
}

/* Red for a share that grew, blue for one that shrank, as deep as the change is
 * against the largest; grey for none (flamegraph.pl's differential palette). */
static void diff_colour(double change, double max_change, char out[8])
{
	double k = max_change > 0 ? fabs(change) / max_change : 0;
	int c = (int)lround(220 - 190 * (k > 1 ? 1 : k));

	if (fabs(change) < 0.005)
		snprintf(out, 8, "#dcdcdc");
	else if (change > 0)
		snprintf(out, 8, "#ff%02x%02x", c, c);
	else
		snprintf(out, 8, "#%02x%02xff", c, c);
}

struct at {
	uint32_t node;
	uint64_t x;
};

/* Walk the drawn frames in depth-first order; with `out`, write them. */
static void walk(struct layout *L, const struct profile *p, const char *unit, uint64_t total,
		 FILE *out)
{
	const struct tree *t = L->t;
	struct at *stack = NULL;
	size_t n = 0, cap = 0;
	struct at a = { 0, 0 };

	L->drawn = L->left_out = L->maxdepth = 0;
	VEC_PUSH(stack, n, cap, a);
	while (n) {
		const struct tnode *nd;
		double x, w, y;
		const char *name;
		char colour[8];
		size_t fit;
		uint64_t cx;

		a = stack[--n];
		nd = &t->nodes[a.node];
		w = (double)nd->weight * L->scale;
		if (w < L->minwidth || nd->weight == 0) {
			L->left_out += L->subtree[a.node];
			continue;
		}
		L->drawn++;
		if (nd->depth > L->maxdepth)
			L->maxdepth = nd->depth;
		cx = a.x;
		/* children pushed last first, so that they come out in name order */
		for (uint32_t i = 0; i < nd->nchildren; i++)
			cx += t->nodes[t->children[nd->first_child + i]].weight;
		for (uint32_t i = nd->nchildren; i-- > 0;) {
			struct at c;

			c.node = t->children[nd->first_child + i];
			cx -= t->nodes[c.node].weight;
			c.x = cx;
			VEC_PUSH(stack, n, cap, c);
		}
		if (!out)
			continue;
		x = PAD + (double)a.x * L->scale;
		y = L->inverted ? L->top + nd->depth * FRAME_H : L->top - nd->depth * FRAME_H;
		name = strtab_str(&t->names, nd->text);
		fputs("<g><title>", out);
		xml_text(out, name, SIZE_MAX);
		if (L->diff) {
			double bs = diff_share_base(t, nd), ns = diff_share_new(t, nd);

			/* NEW's weight on the second line, as the script reads it */
			fprintf(out, "\n%" PRIu64 " %s (%.2f%%)\nbase: %.2f%%, new: %.2f%%, change: "
				"%+.2f points%s", nd->nw, unit, ns, bs, ns, ns - bs,
				nd->nw ? "" : " (only in BASE)");
		} else {
			fprintf(out, "\n%" PRIu64 " %s (%.2f%%)", nd->weight, unit,
				100.0 * (double)nd->weight / (double)total);
		}
		if (nd->module && profile_text(p, nd->module)[0]) {
			fputs("\nmodule: ", out);
			xml_text(out, profile_text(p, nd->module), SIZE_MAX);
		}
		if (nd->file && profile_text(p, nd->file)[0]) {
			fputs("\nsource: ", out);
			xml_text(out, profile_text(p, nd->file), SIZE_MAX);
			if (nd->line_lo == nd->line_hi && nd->line_lo)
				fprintf(out, ":%u", nd->line_lo);
			else if (nd->line_lo)
				fprintf(out, ":%u-%u", nd->line_lo, nd->line_hi);
		}
		fprintf(out, "\n%s</title>", kind_word(nd->kind));
		if (L->diff)
			diff_colour(diff_share_new(t, nd) - diff_share_base(t, nd), L->max_change,
				    colour);
		else
			frame_colour(nd->kind, name, L->offcpu, colour);
		fprintf(out, "<rect x=\"%.*f\" y=\"%.0f\" width=\"%.*f\" height=\"15\" fill=\"%s\"%s/>",
			L->decimals, x, y, L->decimals, w, colour,
			L->diff && !nd->nw ? " stroke=\"#1e3c96\" stroke-dasharray=\"3,2\"" : "");
		fit = label_fit(w);
		if (fit) {
			fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
			xml_text(out, name, fit);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	free(stack);
}

static void legend_diff(FILE *out, double x, double y)
{
	static const char *const fill[] = { "#ff1e1e", "#1e1eff", "#dcdcdc", "#ffffff" };
	static const char *const word[] = { "grew", "shrank", "same", "only BASE" };

	for (size_t i = 0; i < 4; i++, x += 84) {
		fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"%s/>",
			x, y - 10, fill[i], i == 3 ? " stroke=\"#1e3c96\" stroke-dasharray=\"3,2\"" : "");
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">%s</text>", x + 16, y, word[i]);
	}
	fputs("\n", out);
}

static void legend(FILE *out, double x, double y, int offcpu)
{
	static const uint8_t kinds[] = { FRAME_NATIVE, FRAME_INLINED, FRAME_KERNEL, FRAME_JIT };
	static const char *const oncpu_mid[] = { "#e0503c", "#50b9b9", "#f0b41a", "#50db5a" };
	static const char *const offcpu_mid[] = { "#3c78dc", "#5aa0e6", "#8282ee", "#32b4d2" };
	const char *const *mid = offcpu ? offcpu_mid : oncpu_mid;

	for (size_t i = 0; i < 4; i++, x += 84) {
		fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x,
			y - 10, mid[i]);
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">%s</text>", x + 16, y, kind_word(kinds[i]));
	}
	fputs("\n", out);
}

int svg_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	const struct pc_event *ev = shown_event(p, o);
	double width = o->width ? o->width : 1200, height;
	struct layout L;
	struct tree t;
	const char *unit = "samples";
	uint64_t total;
	char title[512], sub[512];
	int ret = 0;

	memset(&t, 0, sizeof(t));
	tree_build(&t, p, o);
	total = t.nodes[0].weight;
	if (o->weight_period && ev)
		unit = ev->unit == PC_UNIT_NANOSECONDS ? "ns" : "events";
	else if (o->weight_period)
		unit = "period";

	memset(&L, 0, sizeof(L));
	L.t = &t;
	L.inverted = o->inverted;
	L.offcpu = ev && ev->time == PC_TIME_OFFCPU;
	L.minwidth = o->minwidth > 0 ? o->minwidth : 0.1;
	L.decimals = L.minwidth >= 0.1 ? 2 : L.minwidth >= 0.01 ? 3 : 4;
	L.scale = total ? (width - 2 * PAD) / (double)total : 0;
	L.subtree = xcalloc(t.n ? t.n : 1, sizeof(*L.subtree));
	L.diff = o->diff != NULL;
	for (size_t i = 0; L.diff && i < t.n; i++) {
		double c = fabs(diff_share_new(&t, &t.nodes[i]) - diff_share_base(&t, &t.nodes[i]));

		if (c > L.max_change)
			L.max_change = c;
	}
	for (size_t i = t.n; i-- > 0;) {
		L.subtree[i] += 1;
		if (i)
			L.subtree[t.nodes[i].parent] += L.subtree[i];
	}
	walk(&L, p, unit, total, NULL);
	if (!total)
		L.left_out = 0; /* no samples: no frames, the root neither */
	height = HEADER + (double)(L.maxdepth + 1) * FRAME_H + FOOTER;
	/* the y of depth 0 */
	L.top = L.inverted ? HEADER : HEADER + (double)L.maxdepth * FRAME_H;

	{
		const char *kind = !ev || ev->time == PC_TIME_SAMPLED ? ""
				   : ev->time == PC_TIME_OFFCPU ? "Off-CPU Time " : "Wall-Clock Time ";
		const char *graph = o->inverted ? "Icicle Graph" : "Flame Graph";

		if (o->title)
			snprintf(title, sizeof(title), "%s", o->title);
		else if (o->diff)
			snprintf(title, sizeof(title), "Differential %s: %s -> %s", graph,
				 o->diff->base_name, o->diff->new_name);
		else if (p->cmdline && profile_text(p, p->cmdline)[0])
			snprintf(title, sizeof(title), "%s%s: %s", kind, graph,
				 profile_text(p, p->cmdline));
		else
			snprintf(title, sizeof(title), "%s%s", kind, graph);
	}
	if (o->diff)
		snprintf(sub, sizeof(sub), "%" PRIu64 " %s%s%s in NEW; colour: change of share, "
			 "%zu frames; %zu narrower than %g px left out",
			 t.nodes[0].nw, unit, ev ? " of " : "", ev ? profile_text(p, ev->name) : "",
			 L.drawn, L.left_out, L.minwidth);
	else
		snprintf(sub, sizeof(sub), "%" PRIu64 " %s%s%s, %zu frames; %zu narrower than %g px "
			 "left out",
			 total, unit, ev ? " of " : "", ev ? profile_text(p, ev->name) : "", L.drawn,
			 L.left_out, L.minwidth);

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" onload=\"init()\">\n",
		width, height, width, height);
	fprintf(out, "<!-- perfconv %s: %zu frames drawn, %zu frames narrower than %g px not drawn "
		"(left-out-frames=%zu) -->\n", PERFCONV_VERSION, L.drawn, L.left_out, L.minwidth,
		L.left_out);
	fputs("<style>text{font-family:monospace;font-size:12px;fill:#000}"
	      "#frames g{cursor:pointer}#frames g:hover rect{stroke:#000;stroke-width:0.5}"
	      ".hide{display:none}.par rect{opacity:0.6}.btn{cursor:pointer;fill:#248}"
	      "#title{font-size:17px;text-anchor:middle}</style>\n", out);
	fprintf(out, "<script><![CDATA[\nvar W=%.0f,PAD=%.0f,FH=%.0f,CW=%g,TOP=%.0f,INV=%d,EPS=%g,"
		"UNIT='%s';\n%s]]></script>\n", width, PAD, FRAME_H, CHAR_W, L.top, L.inverted,
		2 * pow(10, -L.decimals), unit, script);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n");
	fprintf(out, "<text id=\"title\" x=\"%.0f\" y=\"22\">", width / 2);
	/* 17 px characters, clear of the buttons at either end */
	xml_text(out, title, label_fit((width - 2 * PAD - 2 * 90) * 12 / 17));
	fprintf(out, "</text>\n<text id=\"sub\" x=\"%.0f\" y=\"42\">", PAD);
	xml_text(out, sub, label_fit(width - 2 * PAD - 4 * 84));
	fputs("</text>\n", out);
	if (L.diff)
		legend_diff(out, width - PAD - 4 * 84, 42);
	else
		legend(out, width - PAD - 4 * 84, 42, L.offcpu);
	fprintf(out, "<text id=\"unzoom\" class=\"btn hide\" x=\"%.0f\" y=\"22\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n",
		PAD, width - PAD, PAD, height - 14, width - PAD, height - 14);
	if (!total)
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">no samples</text>\n", PAD, HEADER + 12);
	fputs("<g id=\"frames\">\n", out);
	if (total)
		walk(&L, p, unit, total, out);
	fputs("</g>\n</svg>\n", out);

	free(L.subtree);
	tree_release(&t);
	return write_end(out, ret);
}

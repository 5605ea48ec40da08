#!/usr/bin/env python3
"""make-arm64: aarch64 `perf record --call-graph dwarf` recordings made without arm64 hardware.

Usage: make-arm64.py OUTDIR   (run by testdata/record-arm64.sh)

No arm64 machine is at hand, so each recording is made from an aarch64 program run
under qemu-aarch64 (user mode) and stopped by gdb-multiarch through qemu's gdb stub
(gdb-sample.py): at every instruction of the program's own functions (those of its
DWARF's address ranges), of its PLT, of a few libc functions and of the JIT code, the
first and the seventh time it runs there. At each stop the registers x0..x30, sp, pc
and the top of the stack (8 KiB, or up to the stack's end) become one sample, laid
out as perf 6.1 writes a `perf record -e cpu-clock:u --call-graph dwarf` sample on
arm64 (arch/arm64/include/uapi/asm/perf_regs.h: sample_regs_user 0x1ffffffff, bits
X0..X28, X29, LR, SP, PC; PERF_SAMPLE_REGS_ABI_64; STACK_USER of 8192 bytes with the
dyn_size the kernel would give: the bytes up to the stack's end), and gdb's backtrace
at the same stop is the truth (NAME.truth: per sample its frames, root first).

The file: header ARCH "aarch64" (not this host's), HOSTNAME, OSRELEASE, VERSION,
NRCPUS, CMDLINE, EVENT_DESC; the attr of cpu-clock:u with sample_id_all; COMM; an MMAP2
(PERF_RECORD_MISC_MMAP_BUILD_ID: the build id in the record, as perf record
--buildid-mmap writes it) for each executable segment of the program, ld.so and libc at
the address qemu loaded it; for jitprog the jitdump's marker mapping and the anonymous
mapping (//anon) of its JIT code; then the samples, 1 ms apart.

jit.data's process wrote jit-PID.dump (written here, beside it: JIT_CODE_LOAD of the
copy's 68 bytes named jit_loop, preceded by JIT_CODE_UNWINDING_INFO: an .eh_frame made
here by hand (a CIE, an FDE) and its .eh_frame_hdr, laid out as if right after the
code). gdb steps through that frame with the CFI that `as` makes of src/jit_tmpl.S:
the two are written apart.

Truth (NAME.truth, one line a sample): TIME<TAB>ADDRS<TAB>NAMES, root first, ';'
between frames; ADDRS: gdb's real frames (not inlined ones) as MODULE+0xADDR, the
address the one perf script prints (the leaf's pc; a caller's return address - 1),
MODULE the mapped file's basename, its offset in the file (relative to the mapping's
start plus its offset), or [JIT]+0xADDR; NAMES: every frame's function as gdb names
it, inlined ones too.
"""

import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CROSS = "/usr/aarch64-linux-gnu/lib"
CC, CXX = "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"
CFLAGS = ["-O2", "-g", "-fomit-frame-pointer"]
STACK = 4096
PID = 4242
T0 = 1000 * 10**9
RECORDED = {  # what a Debian arm64 machine's mappings name
    "ld-linux-aarch64.so.1": "/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
    "libc.so.6": "/usr/lib/aarch64-linux-gnu/libc.so.6",
}
PROG_DIR = "/opt/perfconv-arm64"


def die(msg):
    sys.exit("make-arm64: " + msg)


class Elf:
    def __init__(self, path):
        d = open(path, "rb").read()
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            die("%s: not a 64-bit little-endian ELF file" % path)
        self.path = path
        phoff, shoff = struct.unpack_from("<QQ", d, 32)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", d, 54)
        self.loads = []
        self.build_id = None
        for i in range(phnum):
            p_type, p_flags, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
            if p_type == 1:
                self.loads.append((p_flags, p_offset, p_vaddr, p_filesz))
            if p_type == 4:  # PT_NOTE
                q = p_offset
                while q < p_offset + p_filesz:
                    nsz, dsz, typ = struct.unpack_from("<III", d, q)
                    name = d[q + 12:q + 12 + nsz]
                    desc_at = q + 12 + (nsz + 3) // 4 * 4
                    if typ == 3 and name[:3] == b"GNU":
                        self.build_id = d[desc_at:desc_at + dsz]
                    q = desc_at + (dsz + 3) // 4 * 4
        secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        strtab = secs[shstrndx]

        def name(off, tab):
            end = d.index(b"\0", tab[4] + off)
            return d[tab[4] + off:end].decode()
        self.sections = {name(s[0], strtab): s for s in secs}
        self.symbols = []
        for s in secs:
            if s[1] in (2, 11):  # SYMTAB, DYNSYM
                link = secs[s[6]]
                for k in range(s[5] // 24):
                    st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", d, s[4] + 24 * k)
                    if st_info & 0xf == 2 and st_shndx and st_size:
                        self.symbols.append((name(st_name, link), st_value, st_size))
        if not self.build_id:
            die("%s: no build id" % path)

    def text_addr(self):
        return self.sections[".text"][3]


def aranges(path):
    """The address ranges of the program's compile units (its DWARF)."""
    out = subprocess.run(["aarch64-linux-gnu-readelf", "--debug-dump=aranges", path],
                         capture_output=True, text=True, check=True).stdout
    res = []
    for line in out.splitlines():
        m = re.match(r"^\s+(?:0x)?([0-9a-f]{8,})\s+(?:0x)?([0-9a-f]{8,})\s*$", line)
        if m and int(m.group(2), 16):
            res.append((int(m.group(1), 16), int(m.group(2), 16)))
    return res


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def run_gdb(w, prog, args, funcs, texts, jit=False):
    port = free_port()
    cfg = {"out": os.path.join(w, os.path.basename(prog) + ".jsonl"), "prog": prog,
           "sysroot": os.path.join(w, "sysroot"), "port": port, "stack_size": STACK,
           "funcs": funcs, "texts": texts, "start_at": "drive" if jit else "main"}
    if jit:
        cfg.update(jit=True, jit_elf=os.path.join(w, "jit_loop.elf"), cc=CC,
                   jit_src=os.path.join(HERE, "src", "jit_tmpl.S"), jit_size=68)
    cfgp = os.path.join(w, "cfg.json")
    json.dump(cfg, open(cfgp, "w"))
    q = subprocess.Popen(["qemu-aarch64-static", "-L", cfg["sysroot"], "-g", str(port), prog] + args,
                         stdout=subprocess.DEVNULL)
    env = dict(os.environ, ARM64_CFG=cfgp)
    g = subprocess.run(["gdb-multiarch", "-nx", "-batch", "-x", os.path.join(HERE, "gdb-sample.py")],
                       env=env, capture_output=True, text=True)
    q.wait(timeout=60)
    if g.returncode or os.environ.get("ARM64_KEEP"):
        sys.stderr.write(g.stdout[-3000:] + g.stderr[-3000:])
    if g.returncode:
        die("gdb failed")
    lines = [json.loads(x) for x in open(cfg["out"])]
    info = next(x["info"] for x in lines if "info" in x)
    return info, [x for x in lines if "regs" in x]


def pad(b, n=8):
    return b + b"\0" * (-len(b) % n)


def pstr(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 64)
    return struct.pack("<I", len(b)) + b


def trailer(t):
    return struct.pack("<IIQ", PID, PID, t)


def rec(typ, misc, body):
    return struct.pack("<IHH", typ, misc, 8 + len(body)) + body


def mmap2(addr, length, pgoff, path, build_id, t, prot=5, flags=2):
    if build_id is None:
        ids = struct.pack("<IIQQ", 0, 0, 0, 0)
        misc = 2
    else:
        ids = struct.pack("<BBH", len(build_id), 0, 0) + build_id.ljust(20, b"\0")
        misc = 2 | (1 << 14)
    body = struct.pack("<IIQQQ", PID, PID, addr, length, pgoff) + ids + struct.pack("<II", prot, flags)
    return rec(10, misc, body + pad(path.encode() + b"\0") + trailer(t))


SAMPLE_TYPE = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 5) | (1 << 8) | (1 << 12) | (1 << 13)
REGS_MASK = (1 << 33) - 1


def attr():
    flags = (1 << 4 + 1) | (1 << 6) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 12) | \
        (1 << 13) | (1 << 18) | (1 << 22) | (1 << 23) | (1 << 24) | (1 << 25)
    # exclude_kernel, exclude_hv, mmap, comm, freq, enable_on_exec, task, sample_id_all,
    # exclude_callchain_user, mmap2, comm_exec, use_clockid (CLOCK_MONOTONIC: -k 1)
    # (perf record -e cpu-clock:u -F 1000 -k 1)
    a = struct.pack("<IIQQQQQIIQQQQIiQIHHIIQ", 1, 128, 0, 1000, SAMPLE_TYPE, 0, flags, 0, 0, 0, 0, 0,
                    REGS_MASK, STACK, 1, 0, 0, 127, 0, 0, 0, 0)
    assert len(a) == 128
    return a


def sample_rec(s, t):
    regs = s["regs"]
    stack = bytes.fromhex(s["stack"])
    body = struct.pack("<QIIQQ", regs[32], PID, PID, t, 1000000)
    body += struct.pack("<Q", 0)  # callchain: no kernel part, the user part excluded
    body += struct.pack("<Q", 2) + struct.pack("<33Q", *regs)
    body += struct.pack("<Q", STACK) + stack.ljust(STACK, b"\0") + struct.pack("<Q", len(stack))
    return rec(9, 2, body)


def write_perf(path, comm, cmdline, records):
    data = b"".join(records)
    a = attr()
    ids = b""
    hdr_size, attr_size = 104, 128 + 16
    attrs_off = hdr_size
    ids_off = attrs_off + attr_size
    data_off = ids_off + len(ids)
    feats = {}
    feats[3] = pstr("arm64-qemu")
    feats[4] = pstr("6.1.0-28-arm64")
    feats[5] = pstr("6.1.119")
    feats[6] = pstr("aarch64")
    feats[7] = struct.pack("<II", 4, 4)
    argv = cmdline.split()
    feats[11] = struct.pack("<I", len(argv)) + b"".join(pstr(x) for x in argv)
    feats[12] = struct.pack("<II", 1, 128) + a + struct.pack("<I", 0) + pstr("cpu-clock:u")
    bits = 0
    for k in feats:
        bits |= 1 << k
    sec_off = data_off + len(data)
    table = b""
    body = b""
    at = sec_off + 16 * len(feats)
    for k in sorted(feats):
        table += struct.pack("<QQ", at + len(body), len(feats[k]))
        body += feats[k]
    head = struct.pack("<8sQQQQQQQQ", b"PERFILE2", hdr_size, attr_size, attrs_off, attr_size,
                       data_off, len(data), 0, 0) + bits.to_bytes(32, "little")
    with open(path, "wb") as f:
        f.write(head + a + struct.pack("<QQ", ids_off, 0) + ids + data + table + body)


def eh_frame_jit(code, size):
    """The JIT function's .eh_frame and .eh_frame_hdr, as if placed right after its code
    (aligned to 8): its rules as src/jit_tmpl.S states them."""
    cie = b"\x01" + b"zR\0" + b"\x04" + b"\x78" + b"\x1e" + b"\x01" + b"\x1b" + b"\x0c\x1f\x00"
    cie = pad(cie, 4)
    cie = struct.pack("<II", 4 + len(cie), 0) + cie
    eh_addr = code + (size + 7) // 8 * 8
    insns = bytes([0x41, 0x0e, 48,              # at 4: CFA = sp + 48
                   0x41, 0x93, 4, 0x9e, 3,      # at 8: x19 at CFA-32, x30 at CFA-24
                   0x41, 0x94, 2, 0x95, 1,      # at 12: x20 at CFA-16, x21 at CFA-8
                   0x40 | 11, 0xd4, 0xd5,       # at 56: x20, x21 restored
                   0x41, 0xd3, 0xde,            # at 60: x19, x30 restored
                   0x41, 0x0e, 0])              # at 64: CFA = sp
    fde_at = eh_addr + len(cie)
    body = struct.pack("<iI", code - (fde_at + 8), size) + b"\x00" + insns
    body = pad(body, 4)
    fde = struct.pack("<II", 4 + len(body), len(cie) + 4) + body
    eh = cie + fde + b"\0\0\0\0"
    hdr_addr = eh_addr + len(eh)
    hdr = bytes([1, 0x1b, 0x03, 0x3b]) + struct.pack("<iIii", eh_addr - (hdr_addr + 4), 1,
                                                    code - hdr_addr, fde_at - hdr_addr)
    return eh, hdr


def write_jitdump(path, code, code_bytes, t):
    eh, hdr = eh_frame_jit(code, len(code_bytes))
    data = eh + hdr
    out = struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 183, 0, PID, t - 1000, 0)
    uw = struct.pack("<QQQ", len(data), len(hdr), len(data)) + data
    uw = pad(uw)
    out += struct.pack("<IIQ", 4, 16 + len(uw), t - 900) + uw
    load = struct.pack("<IIQQQQ", PID, PID, code, code, len(code_bytes), 1) + b"jit_loop\0" + code_bytes
    out += struct.pack("<IIQ", 0, 16 + len(load), t - 800) + load
    open(path, "wb").write(out)


def build(w, out):
    progs = {}
    for name, cc, src, extra in (("cprog", CC, "cprog.c", []),
                                 ("cxxprog", CXX, "cxxprog.cpp", ["-static-libstdc++", "-static-libgcc"]),
                                 ("jitprog", CC, "jitprog.c", [])):
        dst = os.path.join(out, name)
        # from here, the paths in the DWARF relative: the same binary wherever it is made
        subprocess.run([cc] + CFLAGS + ["-ffile-prefix-map=%s=." % HERE, "-o", dst,
                        os.path.join("src", src)] + extra, check=True, cwd=HERE)
        progs[name] = dst
    return progs


def main():
    if len(sys.argv) != 2:
        die("usage: make-arm64.py OUTDIR")
    out = os.path.abspath(sys.argv[1])
    w = os.path.join(out, ".work")
    shutil.rmtree(w, ignore_errors=True)
    sysroot = os.path.join(w, "sysroot")
    symfs = os.path.join(out, "symfs")
    os.makedirs(os.path.join(sysroot, "lib", "aarch64-linux-gnu"))
    for base, rp in RECORDED.items():
        dst = symfs + rp
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(CROSS, base), dst)
    shutil.copyfile(symfs + RECORDED["ld-linux-aarch64.so.1"], os.path.join(sysroot, "lib", "ld-linux-aarch64.so.1"))
    shutil.copyfile(symfs + RECORDED["libc.so.6"], os.path.join(sysroot, "lib", "aarch64-linux-gnu", "libc.so.6"))
    progs = build(w, out)
    libc = Elf(symfs + RECORDED["libc.so.6"])
    libc_host = os.path.realpath(os.path.join(sysroot, "lib", "aarch64-linux-gnu", "libc.so.6"))
    libc_funcs = [(libc_host, v, s) for n, v, s in libc.symbols if n in ("qsort_r", "qsort", "exit")]
    for name, args, rname in (("cprog", ["12"], "c"), ("cxxprog", ["4"], "cxx"), ("jitprog", ["6"], "jit")):
        prog = progs[name]
        e = Elf(prog)
        funcs = []
        for lo, ln in aranges(prog):
            funcs += [(prog, v, s) for n, v, s in e.symbols if lo <= v < lo + ln]
        plt = e.sections.get(".plt")
        if plt:
            # its entries; not PLT0, lazy binding's trampoline, which pushes x16 and x30
            # without CFI: neither gdb nor perfconv unwinds it (docs/FORMATS.md)
            funcs.append((prog, plt[3] + 32, plt[5] - 32))
        funcs = sorted(set(funcs)) + libc_funcs
        texts = {prog: e.text_addr(), libc_host: libc.text_addr()}
        info, samples = run_gdb(w, prog, args, funcs, texts, jit=name == "jitprog")
        elfs = {os.path.realpath(prog): (e, PROG_DIR + "/" + name),
                libc_host: (libc, RECORDED["libc.so.6"])}
        ld = os.path.realpath(os.path.join(sysroot, "lib", "ld-linux-aarch64.so.1"))
        elfs[ld] = (Elf(ld), RECORDED["ld-linux-aarch64.so.1"])
        maps = []  # (start, end, pgoff, recorded path, elf vaddr of start)
        recs = [rec(3, 1 << 13, struct.pack("<II", PID, PID) + pad((name[:15] + "\0").encode()) + trailer(T0 - 10**6))]
        for host, text in info["biases"].items():
            if host not in elfs:
                continue
            f, rp = elfs[host]
            bias = text - f.text_addr()
            for flags, off, vaddr, filesz in f.loads:
                if not flags & 1:
                    continue
                start = (bias + vaddr) & ~0xfff
                end = (bias + vaddr + filesz + 0xfff) & ~0xfff
                pgoff = off & ~0xfff
                maps.append((start, end, pgoff, rp, f))
                recs.append(mmap2(start, end - start, pgoff, rp, f.build_id, T0 - 10**6))
        truth_jit = None
        if "jit_code" in info:
            code = info["jit_code"]
            tmpl = bytes.fromhex(info["jit_bytes"])
            linked = subprocess.run(["aarch64-linux-gnu-objcopy", "-O", "binary", "-j", ".text",
                                     os.path.join(w, "jit_loop.elf"), "/dev/stdout"],
                                    capture_output=True, check=True).stdout
            if linked != tmpl:
                die("jit_tmpl.S's instructions are not jitprog.c's")
            dump = "/tmp/jit-%d.dump" % PID
            recs.append(mmap2(0x5500ff0000, 4096, 0, dump, None, T0 - 10**6 + 1, prot=5, flags=2))
            recs.append(mmap2(code & ~0xfff, 4096, 0, "//anon", None, T0 - 10**6 + 2, prot=7, flags=0x22))
            write_jitdump(os.path.join(out, "jit-%d.dump" % PID), code, tmpl, T0 - 10**6)
            truth_jit = (code, code + len(tmpl))
        lines = []
        for k, s in enumerate(samples):
            t = T0 + k * 10**6
            recs.append(sample_rec(s, t))
            addrs, names = [], []
            fr = s["frames"]
            if any(f.get("error") for f in fr):
                die("%s: gdb's backtrace failed at 0x%x" % (name, s["bp"]))
            leaf = True
            for f in fr:
                names.append(f["name"] or "??")
                if f["inline"]:
                    continue
                pc = f["pc"]
                where = None
                for start, end, pgoff, rp, ef in maps:
                    # a return address's call is the instruction before it
                    if start <= pc - (0 if leaf else 1) < end:
                        where = "%s+0x%x" % (os.path.basename(rp), pc - start + pgoff)
                if where is None and truth_jit and truth_jit[0] <= pc < truth_jit[1]:
                    where = "[JIT]+0x%x" % pc
                leaf = False
                addrs.append(where or "[unknown]+0x%x" % pc)
            lines.append("%d.%09d\t%s\t%s\n" % (t // 10**9, t % 10**9, ";".join(reversed(addrs)),
                                                ";".join(n.replace(";", ":") for n in reversed(names))))
        write_perf(os.path.join(out, rname + ".data"), name,
                   "/usr/bin/perf record -e cpu-clock:u -k 1 --call-graph dwarf,%d -o %s.data %s/%s %s" %
                   (STACK, rname, PROG_DIR, name, " ".join(args)), recs)
        open(os.path.join(out, rname + ".truth"), "w").write("".join(lines))
        print("make-arm64: %s.data: %d samples" % (rname, len(samples)))
    if not os.environ.get("ARM64_KEEP"):
        shutil.rmtree(w)


main()

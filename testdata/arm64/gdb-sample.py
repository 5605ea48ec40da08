# gdb-sample: run inside gdb-multiarch by make-arm64.py (see its docstring): stops an
# aarch64 program running under qemu-aarch64's gdb stub at every instruction of chosen
# functions (their first and seventh time there), and writes, for each stop, the
# registers, the top of the stack and gdb's backtrace (the truth) as a JSON line.
import json
import os
import subprocess

import gdb

cfg = json.load(open(os.environ["ARM64_CFG"]))
out = open(cfg["out"], "w")
HITS = (1, 7)
stack_top = [0]


def biases():
    """Each loaded file's load bias, from gdb's section table and the file's own."""
    text = gdb.execute("info files", to_string=True)
    res = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5 and f[1] == "-" and f[3] == "is" and f[4] == ".text":
            path = f[6] if len(f) >= 7 and f[5] == "in" else cfg["prog"]
            res[os.path.realpath(path)] = int(f[0], 16)
    return res


def read_regs(fr):
    r = [int(fr.read_register("x%d" % i)) & (2**64 - 1) for i in range(31)]
    r.append(int(fr.read_register("sp")) & (2**64 - 1))
    r.append(int(fr.read_register("pc")) & (2**64 - 1))
    return r


def frames():
    res = []
    fr = gdb.newest_frame()
    while fr is not None:
        sal = fr.find_sal()
        obj = None
        try:
            prog = gdb.current_progspace().objfile_for_address(fr.pc())
            obj = prog.filename if prog else None
        except Exception:
            pass
        # gdb's tail call frames (made from DWARF call sites) are on no stack: a
        # profiler cannot see them, perf and perfconv do not show them
        if fr.type() != gdb.TAILCALL_FRAME:
            res.append({"pc": fr.pc(), "name": fr.name(), "inline": fr.type() == gdb.INLINE_FRAME,
                        "line": sal.line, "objfile": obj})
        try:
            fr = fr.older()
        except gdb.error:
            res.append({"error": True})
            break
    return res


def sample(bp):
    fr = gdb.newest_frame()
    regs = read_regs(fr)
    sp = regs[31]
    n = min(cfg["stack_size"], stack_top[0] - sp)
    mem = bytes(gdb.selected_inferior().read_memory(sp, n)) if n > 0 else b""
    out.write(json.dumps({"bp": bp, "regs": regs, "stack": mem.hex(), "frames": frames()}) + "\n")


class Stop(gdb.Breakpoint):
    def __init__(self, addr):
        # a user breakpoint: at one that is not, gdb hides the inlined frames whose
        # code starts at the address (it presents the stop before the inlined call)
        super().__init__("*0x%x" % addr)
        self.addr = addr
        self.hits = 0

    def stop(self):
        self.hits += 1
        if self.hits in HITS:
            sample(self.addr)
        if self.hits >= HITS[-1]:
            self.enabled = False
        return False


def find_stack_top(sp):
    top = (sp | 0xfff) + 1
    while True:
        try:
            gdb.selected_inferior().read_memory(top, 8)
        except gdb.MemoryError:
            return top
        top += 4096


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")
gdb.execute("set sysroot " + cfg["sysroot"])
gdb.execute("file " + cfg["prog"])
gdb.execute("target remote :%d" % cfg["port"])
gdb.execute("tbreak " + cfg["start_at"])
gdb.execute("continue")
stack_top[0] = find_stack_top(int(gdb.newest_frame().read_register("sp")))
b = biases()
info = {"biases": b, "stack_top": stack_top[0]}
if cfg.get("jit"):
    code = int(gdb.parse_and_eval("(unsigned long)jit_code"))
    elf = cfg["jit_elf"]
    subprocess.run([cfg["cc"], "-nostdlib", "-static", "-Wl,-Ttext=0x%x" % code, "-Wl,-e,jit_loop",
                    "-Wl,--build-id=none", "-o", elf, cfg["jit_src"]], check=True)
    gdb.execute("add-symbol-file %s" % elf)
    info["jit_code"] = code
    want = bytes(gdb.selected_inferior().read_memory(code, cfg["jit_size"]))
    info["jit_bytes"] = want.hex()
for name, vaddr, size in cfg["funcs"]:
    text = b.get(os.path.realpath(name))
    if text is None:
        raise SystemExit("gdb-sample: %s not loaded" % name)
    base = text - cfg["texts"][name]
    for a in range(vaddr, vaddr + size, 4):
        Stop(base + a)
if cfg.get("jit"):
    for a in range(0, cfg["jit_size"], 4):
        Stop(info["jit_code"] + a)
out.write(json.dumps({"info": info}) + "\n")
try:
    gdb.execute("continue")
except gdb.error:
    pass
out.close()

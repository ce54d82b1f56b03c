import re
BOOT = {"icount": True}
def test_explore(nb):
    for c in ("pmu backend model 0F_04", "run --feed loop 10000", "run --feed loop 20000", "stat loop 10000", "stat loop 20000",
              "stat -e page_walk_type:DTMISS --ring 3 memwalk 512K 4096 3", "stat --preset 0xFFFFFFF000 loop 1000", "record -e instr_retired -c 37 loop 1000", "report"):
        print("==>", c)
        print(nb.cmd(c, timeout=300))

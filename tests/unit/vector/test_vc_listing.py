"""The program listings: describe_kick in the compiler's program.txt form, and the disassembler's CLI."""

from __future__ import annotations

from models.bundle.reader import Bundle
from models.vector.disasm import describe_kick, main, program_from
from models.vector import assemble, desc_payload, imem_payload, pack_dim, run_payload


def test_describe_kick_lists_payloads_then_the_program_each_run_runs() -> None:
    words = assemble(["VSETI s0, 128", "VSETVL s0", "VLD v0, A0+8", "VHALT"])
    payloads = [imem_payload(i, w) for i, w in enumerate(words)] + [desc_payload(0, 1, pack_dim(-3, 8)),
                                                                     desc_payload(0, 0, 0x80001000), run_payload(0)]
    imem = [0] * 512
    lines = describe_kick(payloads, imem)
    assert lines[0] == "  IMEM[0] = d0000000  VSETI s0, <next word>"
    assert lines[1] == "  IMEM[1] = 00000080  (immediate 0x000080 of the VSETI at 0)"
    assert "  DESC A0.dim1 = stride -3 bound 8" in lines and "  DESC A0.base = 0x80001000" in lines
    assert lines[lines.index("  RUN pc=0") + 1:] == [
        "         0: d0000000  VSETI s0, 0x000080", "         1: 00000080  (immediate)",
        "         2: c0000000  VSETVL s0", "         3: a1000008  VLD v0, A0+8", "         4: f8000000  VHALT"]
    assert imem[:5] == words  # the IMEM the kick built, for the next kick of the same core
    assert program_from(imem, 2) == words[2:]


def test_the_cli_lists_a_bundle_as_the_compiler_does(capsys) -> None:
    assert main(["--bundle", "ops_log2_m32n64"]) == 0
    out = capsys.readouterr().out.splitlines()
    b = Bundle("ops_log2_m32n64")
    assert out[0] == f"-- round 0 kick [1, 0] (VC) {len(b.rounds[0].kicks[0].flits)} flits"
    # the compiler's own listing names the same words in the same order
    listed = [line.split()[1] for line in out
              if line.strip()[:1].isdigit() and ":" in line and "(immediate)" not in line]  # it lists no immediates
    compiler = [line.split()[1] for line in (b.path / "program.txt").read_text().splitlines()
                if line.strip()[:1].isdigit() and ":" in line]
    assert listed[:len(compiler)] == compiler[:len(listed)] and len(listed) >= 30


def test_the_cli_disassembles_words(capsys) -> None:
    assert main(["288e0800", "f0400020"]) == 0
    assert capsys.readouterr().out.splitlines() == ["288e0800  VMUL v7, v0, s4", "f0400020  VDRAIN A2, 32"]


def test_a_vector_fault_names_the_program_disassembled() -> None:
    """The host sequence's UnitFaultError carries the program the core was sent, in the listing form."""
    from models.orch.host_port import NodeStatus
    from tb.system.host_sequence import UnitFaultError

    words = assemble(["VSETI s4, 0", "VSETVL s4", "VHALT"])
    listing = describe_kick([imem_payload(i, w) for i, w in enumerate(words)] + [run_payload(0)])
    err = UnitFaultError("vector stage", (1, 0), NodeStatus(code=4, arg=7, count=5, valid=True), listing)
    text = str(err)
    assert "FAULT F_VL (arg 7)" in text and "VSETVL s4" in text and "RUN pc=0" in text

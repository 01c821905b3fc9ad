// More P4Info features (expected P4Info written by hand in test_p4info_features.py):
// @pkginfo, structured annotations, selector size semantics, an inline named
// action profile and direct meter, a struct value set with @match, string translation, plain
// enums, error keys and a register of a struct holding a header.
#include <core.p4>
#include <v1model.p4>

@p4runtime_translation("example.org/name", string)
type bit<32> Name_t;
enum Mode { FAST, SAFE }

header a_t { bit<8> x; bit<16> y; }
struct hs { a_t a; }
struct m_t { bit<8> k; Mode mode; }
struct report_t { a_t hdr; bit<8> k; }
struct vs_t { @match(ternary) bit<8> x; bit<16> y; }

parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    value_set<vs_t>(8) pvs;
    state start {
        p.extract(hdr.a);
        transition select(hdr.a.x, hdr.a.y) { pvs: accept; default: accept; }
    }
}

control VC(inout hs hdr, inout m_t m) { apply { } }

control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    register<report_t>(4) reports;
    @selector_size_semantics("sum_of_members") @max_member_weight(100)
    action_selector(HashAlgorithm.crc32, 32w256, 32w16) sel;

    action named(Name_t who, Mode mode) { m.mode = mode; }
    action nop() { }

    @Tags[owner = "ops", level = 2]
    table by_error {
        key = { sm.parser_error : exact; }
        actions = { named; nop; }
        default_action = nop();
    }
    table balanced {
        key = { hdr.a.x : exact; hdr.a.y : selector; }
        actions = { nop; }
        implementation = sel;
    }
    table profiled {
        key = { hdr.a.y : exact; }
        actions = { nop; }
        @name("inline_profile") implementation = action_profile(32w64);
    }
    table metered {
        key = { hdr.a.x : exact; }
        actions = { nop; }
        @name("inline_meter") meters = direct_meter<bit<32>>(MeterType.packets);
    }
    apply {
        by_error.apply();
        balanced.apply();
        profiled.apply();
        metered.apply();
        report_t r = { hdr.a, m.k };
        reports.write(0, r);
    }
}

control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.a); } }

@pkginfo(name = "more", version = "1.2")
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

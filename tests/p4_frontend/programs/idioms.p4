// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern clone3
// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern resubmit
// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern recirculate
/* Idioms seen in real v1model programs: top-level actions with directional
 * parameters bound in action lists, controls used as helper functions,
 * slice assignments, range entries, empty field lists for the deprecated
 * resubmit/recirculate/clone3, default actions without parentheses. */
#include <core.p4>
#include <v1model.p4>

const bit<32> INSTANCE_RESUBMIT = 6;
#define IS_RESUBMITTED(m) ((m).instance_type == INSTANCE_RESUBMIT)

header op_t { bit<8> op; bit<8> flags; bit<8> level; }
header item_t { bit<8> v; }
struct hdrs_t { op_t op; item_t[4] items; }
struct meta_t { bit<32> addr; }

action drop_it(inout standard_metadata_t sm) { mark_to_drop(sm); }

parser Prs(packet_in packet, out hdrs_t hdr, inout meta_t meta,
           inout standard_metadata_t standard_metadata) {
    const bit<8> MORE = 0x80;
    state start {
        packet.extract(hdr.op);
        transition select (hdr.op.flags & MORE) {
            MORE : items;
            default : accept;
        }
    }
    state items {
        packet.extract(hdr.items.next);
        transition select (hdr.items.last.v[7:7]) {
            1 : items;
            0 : accept;
        }
    }
}

control MakeAddr(out bit<32> addr, in bit<8> a, in bit<8> b, in bit<8> c, in bit<8> d) {
    apply { addr = a ++ b ++ c ++ d; }
}

control StackOp(inout hdrs_t hdr, in bit<8> op) {
    apply {
        if (op[7:4] == 1) {
            if (op[3:0] == 1) { hdr.items.push_front(1); }
            else if (op[3:0] == 2) { hdr.items.push_front(2); }
        } else if (op[7:4] == 2) {
            hdr.items.pop_front(1);
        }
    }
}

control Ing(inout hdrs_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    MakeAddr() make_addr;
    StackOp() stack_op;
    action to(bit<9> port) { standard_metadata.egress_spec = port; }
    action again() { resubmit({}); }
    action mirror() { clone3(CloneType.I2E, 5, {}); }
    table ranges {
        key = { hdr.op.level : range; }
        actions = { to; again; mirror; drop_it(standard_metadata); }
        default_action = drop_it(standard_metadata);
        const entries = {
            1..8   : to(1);
            6..12  : to(2);
            15     : again();
            _      : mirror();
        }
    }
    apply {
        if (IS_RESUBMITTED(standard_metadata)) {
            make_addr.apply(meta.addr, 10, 0, 0, 1);
        }
        stack_op.apply(hdr, hdr.op.op);
        hdr.op.flags[0:0] = 1;
        hdr.op.flags[7:4] = hdr.op.level[3:0];
        ranges.apply();
    }
}

control Egr(inout hdrs_t hdr, inout meta_t meta, inout standard_metadata_t standard_metadata) {
    action back() { recirculate({}); }
    table t { actions = { back; NoAction; } default_action = back; }
    apply { t.apply(); }
}

control Vfy(inout hdrs_t hdr, inout meta_t meta) { apply { } }
control Cmp(inout hdrs_t hdr, inout meta_t meta) { apply { } }
control Dep(packet_out packet, in hdrs_t hdr) {
    apply { packet.emit(hdr.op); packet.emit(hdr.items); }
}

V1Switch(Prs(), Vfy(), Ing(), Egr(), Cmp(), Dep()) main;

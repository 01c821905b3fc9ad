// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): table applied more than once
// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): priority in const entries
/*
 * Match-action tables: every match kind, control-plane priorities, const
 * entries (in program order and with explicit priorities), default actions,
 * @name annotations, actions with directional parameters, and apply results
 * (hit / miss / action_run).  The keys header selects which table to apply;
 * the result header reports what happened.  Output goes to port 1.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header keys_t {
    bit<8>  which;
    bit<8>  e;
    bit<16> t;
    bit<16> r;
    bit<8>  o;
    bit<32> l;
}

header result_t {
    bit<8> action_id;
    bit<8> param;
    bit<8> hit_flag;
    bit<8> run_flag;
}

struct headers {
    ethernet_t ethernet;
    keys_t     keys;
    result_t   result;
}

struct metadata { }

parser TParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.keys);
        packet.extract(hdr.result);
        transition accept;
    }
}

control TVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control TIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action set_result(bit<8> id) {
        hdr.result.action_id = id;
    }

    action set_pair(bit<8> id, bit<8> param) {
        hdr.result.action_id = id;
        hdr.result.param = param;
    }

    action on_miss() {
        hdr.result.action_id = 0xEE;
    }

    /* A directional parameter: called directly, not from a table. */
    action accumulate(inout bit<8> total, in bit<8> amount) {
        total = total + amount;
    }

    table t_exact {
        key = { hdr.keys.e: exact; }
        actions = { set_result; set_pair; NoAction; }
        default_action = NoAction();
    }

    table t_ternary {
        key = { hdr.keys.t: ternary; }
        actions = { set_result; NoAction; }
        default_action = NoAction();
    }

    table t_range {
        key = { hdr.keys.r: range; }
        actions = { set_result; NoAction; }
        default_action = NoAction();
    }

    table t_optional {
        key = {
            hdr.keys.e: exact;
            hdr.keys.o: optional;
        }
        actions = { set_result; NoAction; }
        default_action = NoAction();
    }

    table t_lpm {
        key = { hdr.keys.l: lpm; }
        actions = { set_result; on_miss; }
        default_action = on_miss();
    }

    table t_multi {
        key = {
            hdr.keys.e: exact;
            hdr.keys.t: ternary;
            hdr.keys.r: range;
        }
        actions = { set_result; NoAction; }
        default_action = NoAction();
    }

    @name("renamed")
    table t_named {
        key = { hdr.keys.e: exact @name("tenant"); }
        actions = { set_pair; @defaultonly on_miss; }
        default_action = on_miss();
    }

    table t_const_order {
        key = { hdr.keys.t: ternary; }
        actions = { set_result; }
        const entries = {
            0x1200 &&& 0xFF00: set_result(1);
            0x1234: set_result(2);
            _: set_result(3);
        }
    }

    table t_const_priority {
        key = { hdr.keys.t: ternary; }
        actions = { set_result; }
        const entries = {
            priority = 10: 0x1200 &&& 0xFF00: set_result(1);
            priority = 20: 0x1234 &&& 0xFFFF: set_result(2);
            priority = 5: _: set_result(3);
        }
    }

    table t_const_exact {
        key = {
            hdr.keys.e: exact;
            hdr.keys.r: range;
        }
        actions = { set_pair; NoAction; }
        const default_action = NoAction();
        const entries = {
            (1, 0 .. 99): set_pair(10, 1);
            (1, 100 .. 0xFFFF): set_pair(11, 2);
            (2, _): set_pair(12, 3);
        }
    }

    table t_slice_key {
        key = {
            hdr.keys.l[31:24]: exact @name("top_octet");
            hdr.keys.isValid(): exact;
        }
        actions = { set_result; NoAction; }
        default_action = NoAction();
    }

    table t_default_args {
        key = { hdr.keys.e: exact; }
        actions = { set_pair; }
        default_action = set_pair(0x42, 0x43);
    }

    apply {
        standard_metadata.egress_spec = 1;
        bit<8> which = hdr.keys.which;
        if (which == 1) {
            if (t_exact.apply().hit) {
                hdr.result.hit_flag = 1;
            } else {
                hdr.result.hit_flag = 2;
            }
        } else if (which == 2) {
            t_ternary.apply();
        } else if (which == 3) {
            t_range.apply();
        } else if (which == 4) {
            t_optional.apply();
        } else if (which == 5) {
            if (t_lpm.apply().miss) {
                hdr.result.hit_flag = 2;
            }
        } else if (which == 6) {
            t_multi.apply();
        } else if (which == 7) {
            t_named.apply();
        } else if (which == 8) {
            t_const_order.apply();
        } else if (which == 9) {
            t_const_priority.apply();
        } else if (which == 10) {
            t_const_exact.apply();
        } else if (which == 11) {
            switch (t_exact.apply().action_run) {
                set_result: {
                    hdr.result.run_flag = 0x10;
                }
                set_pair: {
                    hdr.result.run_flag = 0x20;
                }
                default: {
                    hdr.result.run_flag = 0x30;
                }
            }
        } else if (which == 13) {
            t_slice_key.apply();
        } else if (which == 14) {
            t_default_args.apply();
        } else if (which == 12) {
            accumulate(hdr.result.param, hdr.keys.e);
            accumulate(hdr.result.param, 8w1);
        }
    }
}

control TEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control TComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control TDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.keys);
        packet.emit(hdr.result);
    }
}

V1Switch(TParser(), TVerifyChecksum(), TIngress(), TEgress(),
         TComputeChecksum(), TDeparser()) main;

/*
 * tagged_switch.p4 -- a small v1model program for netweft's STF runner tests.
 *
 * Ethernet frames are forwarded on their destination MAC (exact: a port, a
 * multicast group or a drop).  Frames of EtherType 0x88B5 carry a tag
 * (kind, val, port); tagged frames go through a second table keyed on the
 * kind (ternary), the tag's port field (range) and the tag's validity, which
 * may rewrite val or mirror the frame (I2E clone).  A register counts tags
 * per kind (low 3 bits) and a counter counts their packets and bytes.
 * Egress marks clones (source MAC 0xC10E...) and multicast copies (low 16
 * bits of the source MAC = egress_rid).
 */
#include <core.p4>
#include <v1model.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}

header tag_t {
    bit<8>  kind;
    bit<8>  val;
    bit<16> port;
}

struct headers_t {
    eth_t eth;
    tag_t tag;
}

struct meta_t { }

parser TagParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            0x88B5: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control TagIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) seen;
    counter(8, CounterType.packets_and_bytes) per_kind;

    action drop() { mark_to_drop(sm); }
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action flood(bit<16> grp) { sm.mcast_grp = grp; }
    action set_val(bit<8> v) { hdr.tag.val = v; }
    action mirror(bit<32> session) { clone(CloneType.I2E, session); }

    table by_dst {
        key = { hdr.eth.dst: exact; }
        actions = { fwd; flood; drop; }
        default_action = drop();
    }

    table by_kind {
        key = {
            hdr.tag.kind: ternary;
            hdr.tag.port: range;
            hdr.tag.isValid(): exact;
        }
        actions = { set_val; mirror; NoAction; }
        default_action = NoAction();
    }

    apply {
        by_dst.apply();
        if (hdr.tag.isValid()) {
            by_kind.apply();
            bit<32> slot = (bit<32>)hdr.tag.kind[2:0];
            bit<32> old;
            seen.read(old, slot);
            seen.write(slot, old + 1);
            per_kind.count(slot);
        }
    }
}

control TagEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            hdr.eth.src = 0xC10E00000000;
        }
        if (sm.egress_rid != 0) {
            hdr.eth.src[15:0] = sm.egress_rid;
        }
    }
}

control NoUpdate(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control TagDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.tag);
    }
}

V1Switch(TagParser(), NoVerify(), TagIngress(), TagEgress(), NoUpdate(), TagDeparser()) main;

/*
 * Control-plane names of actions: @name (relative and absolute), a top-level
 * action bound to a directional argument in a table's actions list, and the
 * @tableonly / @defaultonly restrictions.  Frame type 0x88C2: key byte, then
 * three result bytes.  Output on port 1.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header names_t {
    bit<8> key;
    bit<8> first;
    bit<8> second;
    bit<8> third;
}

struct headers {
    ethernet_t ethernet;
    names_t    n;
}

struct metadata { }

/* Declared outside every control: its control-plane name has no prefix. */
action top_level_mark(inout names_t n, bit<8> value) {
    n.third = value;
}

parser NParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.n);
        transition accept;
    }
}

control NVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control NIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    @name("renamed_action")
    action annotated(bit<8> value) {
        hdr.n.first = value;
    }

    @name(".absolute_action")
    action absolute(bit<8> value) {
        hdr.n.second = value;
    }

    action only_in_entries(bit<8> value) {
        hdr.n.first = value;
    }

    action only_as_default() {
        hdr.n.first = 0xDD;
    }

    table names {
        key = { hdr.n.key: exact; }
        actions = {
            annotated;
            absolute;
            top_level_mark(hdr.n);
            @tableonly only_in_entries;
            @defaultonly only_as_default;
        }
        default_action = only_as_default();
    }

    apply {
        standard_metadata.egress_spec = 1;
        names.apply();
    }
}

control NEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control NComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control NDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.n);
    }
}

V1Switch(NParser(), NVerifyChecksum(), NIngress(), NEgress(),
         NComputeChecksum(), NDeparser()) main;

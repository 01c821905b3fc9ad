/*
 * The generalised switch statement (P4-16 1.2.2+) on a bit<8> value and on a
 * serializable enum, with fall-through labels and a default.  Frame type
 * 0x88C0: byte value, byte kind, byte result.
 */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Color {
    RED   = 1,
    GREEN = 2,
    BLUE  = 3
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header sw_t {
    bit<8> value;
    Color  color;
    bit<8> by_value;
    bit<8> by_color;
}

struct headers {
    ethernet_t ethernet;
    sw_t       s;
}

struct metadata { }

parser SwParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.s);
        transition accept;
    }
}

control SwVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control SwIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        switch (hdr.s.value) {
            0: { hdr.s.by_value = 10; }
            1:
            2: { hdr.s.by_value = 20; }
            7: { }
            default: { hdr.s.by_value = 30; }
        }
        switch (hdr.s.color) {
            Color.RED: { hdr.s.by_color = 0xAA; }
            Color.GREEN:
            Color.BLUE: { hdr.s.by_color = 0xBB; }
        }
    }
}

control SwEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control SwComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control SwDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.s);
    }
}

V1Switch(SwParser(), SwVerifyChecksum(), SwIngress(), SwEgress(),
         SwComputeChecksum(), SwDeparser()) main;

/*
 * Field names that an implementation might also use for its own bookkeeping
 * (valid, size, name, width, fields, copy, value, data, bits, type, F, X)
 * are ordinary P4 names.  Frame type 0x8888; output on port 1.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header odd_t {
    bit<8> valid;
    bit<8> size;
    bit<8> name;
    bit<8> width;
    bit<8> fields;
    bit<8> copy;
    bit<8> value;
    bit<8> data;
    bit<8> bits;
    bit<8> F;
    bit<8> X;
    bit<8> type;
}

struct headers {
    ethernet_t ethernet;
    odd_t      o;
}

struct metadata {
    bit<8> valid;
    bit<8> F;
}

parser FParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.o);
        transition accept;
    }
}

control FVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control FIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        meta.valid = hdr.o.valid + 1;
        meta.F = hdr.o.F;
        hdr.o.size = meta.valid;
        hdr.o.name = hdr.o.width + hdr.o.fields;
        hdr.o.copy = hdr.o.value ^ hdr.o.data;
        hdr.o.bits = meta.F + hdr.o.X + hdr.o.type;
        standard_metadata.egress_spec = 1;
    }
}

control FEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control FComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control FDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.o);
    }
}

V1Switch(FParser(), FVerifyChecksum(), FIngress(), FEgress(),
         FComputeChecksum(), FDeparser()) main;

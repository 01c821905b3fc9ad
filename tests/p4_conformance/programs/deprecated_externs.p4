// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern clone3
// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern resubmit
// netweft-only leniency (p4c-bm2-ss refuses it; see docs/bmv2-differences.md): deprecated extern recirculate
/*
 * The older v1model forms still found in real programs: clone3(type, session,
 * data), resubmit(data) and recirculate(data), which preserve the listed
 * metadata fields like the *_preserving_field_list forms.  Frame type 0x88C1.
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header old_t {
    bit<8> op;
    bit<8> ig_instance;
    bit<8> eg_instance;
    bit<8> kept;
    bit<8> dropped;
}

struct headers {
    ethernet_t ethernet;
    old_t      o;
}

struct metadata {
    bit<8> kept;
    bit<8> dropped;
}

parser OParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.o);
        transition accept;
    }
}

control OVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control OIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.o.ig_instance = (bit<8>)standard_metadata.instance_type;
        standard_metadata.egress_spec = 2;
        if (standard_metadata.instance_type == 0) {
            meta.kept = 0x11;
            meta.dropped = 0x22;
            if (hdr.o.op == 1) {
                clone3(CloneType.I2E, 32w5, { meta.kept });
            } else if (hdr.o.op == 2) {
                resubmit({ meta.kept });
            }
        }
    }
}

control OEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        hdr.o.eg_instance = (bit<8>)standard_metadata.instance_type;
        hdr.o.kept = meta.kept;
        hdr.o.dropped = meta.dropped;
        if (hdr.o.op == 3 && hdr.o.ig_instance == 0) {
            hdr.o.ig_instance = 0xFF;
            recirculate({ meta.kept });
        }
    }
}

control OComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control ODeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.o);
    }
}

V1Switch(OParser(), OVerifyChecksum(), OIngress(), OEgress(),
         OComputeChecksum(), ODeparser()) main;

// truncate() as BMv2 simple_switch applies it: the smallest length requested wins,
// multicast copies and recirculated packets start without a truncation length.
#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; bit<8> passes; bit<16> seen_length; }
struct headers_t { ctl_t ctl; }
struct meta_t { @field_list(1) bit<8> passes; }

parser TParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
               inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); transition accept; }
}
control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control TIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.ctl.passes = meta.passes;
        hdr.ctl.seen_length = (bit<16>)sm.packet_length;
        if (hdr.ctl.op == 0) {
            truncate(20);
            truncate(12);
            truncate(40);
        } else if (hdr.ctl.op == 1) {
            truncate(8);
            sm.mcast_grp = 1;
        }
    }
}

control TEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.ctl.op == 0) {
            truncate(30);  // larger than ingress's 12: the packet stays at 12
        } else if (hdr.ctl.op == 2 && meta.passes == 0) {
            truncate(8);
            meta.passes = 1;
            recirculate_preserving_field_list(1);
        } else if (hdr.ctl.op == 3) {
            truncate(10);
        }
    }
}

control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control TDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ctl); } }

V1Switch(TParser(), NoVerify(), TIngress(), TEgress(), NoCompute(), TDeparser()) main;

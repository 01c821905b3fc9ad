/* Test program for the traffic manager: the probe header says where a packet
 * goes (port, or 255 for multicast group 1) and at which priority; egress
 * writes the queueing metadata it saw back into the probe header. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header probe_t {
    bit<16> port;           /* egress port, 255: multicast group 1, 511: drop */
    bit<8>  priority;
    bit<8>  qid;
    bit<32> enq_timestamp;
    bit<32> enq_qdepth;
    bit<32> deq_timedelta;
    bit<32> deq_qdepth;
    bit<48> egress_timestamp;
    bit<16> clone_session;  /* non-zero: clone the packet at ingress to this session */
}

struct headers_t {
    ethernet_t ethernet;
    probe_t    probe;
}

struct meta_t { }

parser ProbeParser(packet_in packet, out headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.probe);
        transition accept;
    }
}

control ProbeVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control ProbeIngress(inout headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error != error.NoError) {
            mark_to_drop(standard_metadata);
        } else if (hdr.probe.port == 255) {
            standard_metadata.mcast_grp = 1;
        } else {
            standard_metadata.egress_spec = (bit<9>)hdr.probe.port;
        }
        standard_metadata.priority = (bit<3>)hdr.probe.priority;
        if (hdr.probe.clone_session != 0) {
            clone(CloneType.I2E, (bit<32>)hdr.probe.clone_session);
        }
    }
}

control ProbeEgress(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        hdr.probe.qid = (bit<8>)standard_metadata.qid;
        hdr.probe.enq_timestamp = standard_metadata.enq_timestamp;
        hdr.probe.enq_qdepth = (bit<32>)standard_metadata.enq_qdepth;
        hdr.probe.deq_timedelta = standard_metadata.deq_timedelta;
        hdr.probe.deq_qdepth = (bit<32>)standard_metadata.deq_qdepth;
        hdr.probe.egress_timestamp = standard_metadata.egress_global_timestamp;
    }
}

control ProbeCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control ProbeDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.probe);
    }
}

V1Switch(ProbeParser(), ProbeVerify(), ProbeIngress(), ProbeEgress(), ProbeCompute(),
         ProbeDeparser()) main;

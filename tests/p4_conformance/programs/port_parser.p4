/*
 * A parser that branches on standard_metadata.ingress_port (a CPU port
 * carrying a small header), combined with an I2E clone: simple_switch
 * re-parses the clone with the original ingress port, so the clone sees the
 * CPU header again.  Egress reports in the source MAC's last byte whether the
 * CPU header is valid.
 */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 7;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header cpu_t {
    bit<7> out_port;
    bit<1> mirror;
}

struct headers {
    cpu_t      cpu;
    ethernet_t ethernet;
}

struct metadata { }

parser PParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_cpu;
            default: parse_ethernet;
        }
    }
    state parse_cpu {
        packet.extract(hdr.cpu);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control PVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control PIngress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.cpu.isValid()) {
            standard_metadata.egress_spec = (bit<9>)hdr.cpu.out_port;
            if (hdr.cpu.mirror == 1) {
                clone(CloneType.I2E, 5);
            }
            hdr.cpu.setInvalid();
        } else {
            standard_metadata.egress_spec = CPU_PORT;
        }
    }
}

control PEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        hdr.ethernet.srcAddr[7:0] = hdr.cpu.isValid() ? 8w1 : 8w0;
    }
}

control PComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control PDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.cpu);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(PParser(), PVerifyChecksum(), PIngress(), PEgress(),
         PComputeChecksum(), PDeparser()) main;

// A v1model program with a CPU port: frames of EtherType 0x88b5 go to the
// controller (PacketIn, with the ingress port); PacketOut frames leave on the port
// their header names; everything else follows the exact-match table `forward`
// on the ingress port, which the controller fills over P4Runtime.
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    packet_in_t packet_in;
    packet_out_t packet_out;
    ethernet_t ethernet;
}

struct metadata_t {}

parser CpuParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control CpuVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CpuIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action drop() { mark_to_drop(standard_metadata); }
    action set_port(bit<9> port) { standard_metadata.egress_spec = port; }
    table forward {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_port; drop; }
        default_action = drop();
        size = 64;
    }
    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else if (hdr.ethernet.ether_type == 0x88b5) {
            standard_metadata.egress_spec = CPU_PORT;
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
            hdr.packet_in.pad = 0;
        } else {
            forward.apply();
        }
    }
}

control CpuEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control CpuCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }

control CpuDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(CpuParser(), CpuVerify(), CpuIngress(), CpuEgress(), CpuCompute(),
         CpuDeparser()) main;

/*
 * Stateful v1model externs: register (read-modify-write, narrow widths),
 * counter, meter, direct_counter and direct_meter.  A state header after
 * Ethernet (type 0x88BA) selects the operation; output goes to port 1.
 */
#include <core.p4>
#include <v1model.p4>

const bit<8> OP_FETCH_ADD = 1;
const bit<8> OP_STORE = 2;
const bit<8> OP_SMALL_ADD = 3;
const bit<8> OP_COUNT = 4;
const bit<8> OP_METER = 5;
const bit<8> OP_DIRECT = 6;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header state_t {
    bit<8>  op;
    bit<8>  index;
    bit<32> value;
    bit<8>  color;
    bit<8>  direct_color;
}

struct headers {
    ethernet_t ethernet;
    state_t    st;
}

struct metadata { }

parser SParser(packet_in packet, out headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.st);
        transition accept;
    }
}

control SVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<32>>(16) values;
    register<bit<8>>(4) small;
    counter(8, CounterType.packets_and_bytes) by_index;
    meter(4, MeterType.packets) rate;
    direct_counter(CounterType.packets_and_bytes) per_entry;
    direct_meter<bit<8>>(MeterType.bytes) entry_rate;

    action read_entry_meter() {
        entry_rate.read(hdr.st.direct_color);
    }

    action count_entry() {
        per_entry.count();
    }

    table metered {
        key = { hdr.st.index: exact; }
        actions = { read_entry_meter; NoAction; }
        default_action = NoAction();
        meters = entry_rate;
    }

    table counted {
        key = { hdr.st.index: exact; }
        actions = { count_entry; NoAction; }
        default_action = NoAction();
        counters = per_entry;
    }

    apply {
        standard_metadata.egress_spec = 1;
        bit<32> index = (bit<32>)hdr.st.index;
        if (hdr.st.op == OP_FETCH_ADD) {
            bit<32> old;
            values.read(old, index);
            hdr.st.value = old;
            values.write(index, old + 1);
        } else if (hdr.st.op == OP_STORE) {
            values.write(index, hdr.st.value);
        } else if (hdr.st.op == OP_SMALL_ADD) {
            bit<8> cur;
            small.read(cur, index);
            small.write(index, cur + hdr.st.value[7:0]);
        } else if (hdr.st.op == OP_COUNT) {
            by_index.count(index);
        } else if (hdr.st.op == OP_METER) {
            rate.execute_meter(index, hdr.st.color);
        } else if (hdr.st.op == OP_DIRECT) {
            metered.apply();
            counted.apply();
        }
    }
}

control SEgress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    apply { }
}

control SComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control SDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.st);
    }
}

V1Switch(SParser(), SVerifyChecksum(), MyIngress(), SEgress(),
         SComputeChecksum(), SDeparser()) main;

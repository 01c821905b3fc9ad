/*
 * netweft's declarations of the v1model architecture (the architecture of
 * BMv2 simple_switch), written from its public description for netweft's
 * embedded switch. Semantics are BMv2's; see the simple_switch documentation.
 */
#ifndef _NETWEFT_V1MODEL_P4_
#define _NETWEFT_V1MODEL_P4_
/* p4c's own include guard: programs written for p4c test it with #ifdef. */
#define _V1_MODEL_P4_

#include <core.p4>

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif
/* The v1model API changed at these two versions only; p4c compares with >= and
 * would silently take any other number, netweft refuses it. */
#if (V1MODEL_VERSION + 0) == 0
#error V1MODEL_VERSION is empty or not a number (v1model.p4 defines 20180101 and 20200408)
#elif V1MODEL_VERSION != 20180101 && V1MODEL_VERSION != 20200408
#error unknown V1MODEL_VERSION (v1model.p4 defines 20180101 and 20200408)
#endif

/* Extra match kinds of BMv2. */
match_kind {
    range,
    optional,
    selector
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9> PortId_t;
#endif

/* Intrinsic metadata of every packet. */
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;    /* port the packet arrived on */
    PortId_t egress_spec;     /* set in ingress: output port (511 drops) */
    PortId_t egress_port;     /* in egress: the port being sent to */
#else
    bit<9>   ingress_port;
    bit<9>   egress_spec;
    bit<9>   egress_port;
#endif
    bit<32>  instance_type;   /* normal, clone, resubmit, recirculate, replication */
    bit<32>  packet_length;   /* bytes, without the unparsed tail once truncated */
    @alias("queueing_metadata.enq_timestamp")  bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")     bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta")  bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")     bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp") bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")  bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")     bit<16> mcast_grp;
    @alias("intrinsic_metadata.egress_rid")    bit<16> egress_rid;
    bit<1>   checksum_error;  /* set by verify_checksum on a mismatch */
    error    parser_error;    /* the parser's error, NoError if none */
    @alias("intrinsic_metadata.priority")      bit<3> priority;
    /* Fields of older v1model versions, kept so that older programs compile;
     * BMv2 ignores them (use mark_to_drop and the clone/recirculate externs). */
    @deprecated("use mark_to_drop instead")  bit<1>  drop;
    @deprecated("unused")                    bit<16> recirculate_port;
    @deprecated("unused")                    bit<32> clone_spec;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* Meter colours as BMv2 writes them into the meter's result. */
enum bit<2> MeterColor {
    GREEN = 0,
    YELLOW = 1,
    RED = 2
}

/* An indexed array of counters readable by the control plane. */
/* From V1MODEL_VERSION 20200408 on, counter, meter and register take the index
 * type as a type parameter I (p4c's v1model does the same); before, it is bit<32>. */
#if V1MODEL_VERSION >= 20200408
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}
#else
extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}
#endif

/* A counter attached to a table: one per entry. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

/* An indexed array of two-rate three-colour meters (RFC 2698). */
#if V1MODEL_VERSION >= 20200408
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}
#else
extern meter {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in bit<32> index, out T result);
}
#endif

/* A meter attached to a table: one per entry. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An indexed array of values that the data plane reads and writes. */
#if V1MODEL_VERSION >= 20200408
extern register<T, I> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in I index);
    void write(in I index, in T value);
}
#else
extern register<T> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}
#endif

/* A table implementation that shares action entries (members) between keys. */
extern action_profile {
    action_profile(bit<32> size);
}

/* A uniformly distributed random value in [lo, hi]. */
extern void random<T>(out T result, in T lo, in T hi);

/* Send `data` to the control plane. */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/* Drop the packet at the end of ingress/egress (sets egress_spec to 511, mcast_grp to 0). */
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result = base + (hash of data) mod max (BMv2's definition). */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* A table implementation that picks one member of a group by hashing. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/* Sets standard_metadata.checksum_error when condition holds and the checksum differs. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* Writes the checksum of data into checksum when condition holds. */
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Like verify_checksum, over data followed by the packet's payload. */
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* Like update_checksum, over data followed by the packet's payload. */
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Re-run ingress on the original packet, keeping the fields tagged @field_list(index). */
extern void resubmit_preserving_field_list(bit<8> index);

/* Send the deparsed packet back to ingress, keeping the @field_list(index) fields. */
extern void recirculate_preserving_field_list(bit<8> index);

/* Clone the packet to the session's port (I2E: ingress input; E2E: egress output). */
extern void clone(in CloneType type, in bit<32> session);

/* Clone and keep the metadata fields tagged @field_list(index). */
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

@deprecated("Please use resubmit_preserving_field_list instead.")
extern void resubmit<T>(in T data);

@deprecated("Please use recirculate_preserving_field_list instead.")
extern void recirculate<T>(in T data);

@deprecated("Please use clone_preserving_field_list instead.")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);

/* Send at most `length` bytes of the packet. */
extern void truncate(in bit<32> length);

/* Stop the switch with a message if check is false (debug builds of BMv2). */
extern void assert(in bool check);

/* Like assert, for formal tools; checked like assert at run time. */
extern void assume(in bool check);

/* Print a message to the switch log; `{}` is replaced by the data fields. */
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The architecture's programmable blocks. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif /* _NETWEFT_V1MODEL_P4_ */

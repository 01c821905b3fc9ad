/* A frame sender for the switch-process flood test: AF_PACKET + sendmmsg, so that the
 * sender, not the switch under test, is never the bottleneck.
 *
 *   frame_sender IFNAME valid RATE SECONDS DST_MAC SRC_IP DST_IP
 *       one 96-byte Ethernet/IPv4/UDP frame, RATE frames per second, paced in batches
 *   frame_sender IFNAME junk RATE SECONDS SEED
 *       random frames of 0..9000 bytes (RATE 0: as fast as the kernel takes them):
 *       half shaped as Ethernet/IPv4/UDP to addresses no switch routes (198.18/15),
 *       some aimed at a parser's corner cases (truncated headers, bad IHL, IPv4
 *       options, VLAN-like ethertypes, lengths exactly at header boundaries), the
 *       rest random bytes.
 *
 * Prints one JSON line: {"sent": N, "refused": N, "vlan_short": N, "bytes": N, ...}:
 * "refused" counts frames the kernel would not send (shorter than an Ethernet
 * header, ...); "vlan_short" the sent frames with a VLAN ethertype (0x8100, 0x88a8)
 * shorter than 20 bytes (the tag and the two bytes after it), which the receiving
 * kernel drops before any packet socket sees them (skb_vlan_untag); a veth whose peer's backlog is full answers ENOBUFS,
 * and the frame is sent again.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#define BATCH 32u
#define MAX_LEN 9000u

static uint64_t next_random(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    *state = x;
    return x;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t_ns) {
    struct timespec ts = {(time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static uint16_t ipv4_checksum(const uint8_t *h, uint32_t len) {
    uint32_t sum = 0;
    for (uint32_t i = 0; i + 1 < len; i += 2) sum += (uint32_t)(h[i] << 8 | h[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Ethernet + IPv4 (ihl words) + UDP into buf of len bytes (len >= 14); fields that
 * do not fit are cut off, as a truncated frame is. */
static void shape_ipv4_udp(uint8_t *buf, uint32_t len, uint8_t ihl, uint32_t dst_ip,
                           uint32_t src_ip) {
    uint8_t hdr[14 + 60 + 8];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
    hdr[12] = 0x08; hdr[13] = 0x00;
    uint8_t *ip = hdr + 14;
    ip[0] = (uint8_t)(0x40 | (ihl & 0x0f));
    uint32_t ip_len = len > 14 ? len - 14 : 0;
    ip[2] = (uint8_t)(ip_len >> 8); ip[3] = (uint8_t)ip_len;
    ip[8] = 64; ip[9] = 17;
    memcpy(ip + 12, &src_ip, 4);
    memcpy(ip + 16, &dst_ip, 4);
    uint32_t ip_hlen = (uint32_t)(ihl & 0x0f) * 4u;
    for (uint32_t i = 20; i < ip_hlen && i < 60; i++) ip[i] = 1;   /* NOP options */
    if (ip_hlen >= 20) {
        uint16_t c = ipv4_checksum(ip, ip_hlen);
        ip[10] = (uint8_t)(c >> 8); ip[11] = (uint8_t)c;
    }
    uint8_t *udp = ip + (ip_hlen >= 20 ? ip_hlen : 20);
    udp[0] = 0x30; udp[1] = 0x39; udp[2] = 0x13; udp[3] = 0x89;
    uint32_t udp_len = ip_len > ip_hlen ? ip_len - ip_hlen : 0;
    udp[4] = (uint8_t)(udp_len >> 8); udp[5] = (uint8_t)udp_len;
    uint32_t hdr_len = (uint32_t)(udp + 8 - hdr);
    memcpy(buf, hdr, len < hdr_len ? len : hdr_len);
}

static uint32_t junk_frame(uint8_t *buf, uint64_t *rng) {
    uint64_t r = next_random(rng);
    uint32_t kind = (uint32_t)(r % 16u);
    uint32_t len = (uint32_t)((r >> 8) % (MAX_LEN + 1u));
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t v = next_random(rng);
        memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
    }
    uint32_t dst = htonl(0xc6120000u | (uint32_t)((r >> 32) & 0x1ffffu));   /* 198.18/15 */
    uint32_t src = htonl(0x0a630000u | (uint32_t)((r >> 48) & 0xffffu));
    static const uint32_t boundaries[] = {14, 15, 18, 33, 34, 35, 41, 42, 43, 60, 64};
    static const uint16_t vlan_types[] = {0x8100, 0x88a8, 0x9100, 0x86dd, 0x0806};
    switch (kind) {
    case 0: case 1: case 2: case 3:              /* well-formed IPv4/UDP, random length */
        if (len < 42) len = 42 + len;
        shape_ipv4_udp(buf, len, 5, dst, src);
        break;
    case 4:                                      /* truncated headers */
        len = 14 + len % 28u;
        shape_ipv4_udp(buf, len, 5, dst, src);
        break;
    case 5:                                      /* bad IHL (0..4) */
        if (len < 14) len = 14;
        shape_ipv4_udp(buf, len, (uint8_t)(r >> 40) % 5u, dst, src);
        break;
    case 6:                                      /* IPv4 options (IHL 6..15) */
        if (len < 14) len = 14;
        shape_ipv4_udp(buf, len, (uint8_t)(6u + (uint32_t)(r >> 40) % 10u), dst, src);
        break;
    case 7:                                      /* exactly at header boundaries */
        len = boundaries[(r >> 40) % (sizeof boundaries / sizeof boundaries[0])];
        shape_ipv4_udp(buf, len, 5, dst, src);
        break;
    case 8: case 9:                              /* VLAN-like and other ethertypes */
        if (len >= 14) {
            uint16_t t = vlan_types[(r >> 40) % (sizeof vlan_types / sizeof vlan_types[0])];
            buf[12] = (uint8_t)(t >> 8); buf[13] = (uint8_t)t;
        }
        break;
    default:                                     /* random bytes */
        break;
    }
    return len;
}

static int vlan_too_short(const uint8_t *buf, uint32_t len) {
    return len >= 14 && len < 20 && ((buf[12] == 0x81 && buf[13] == 0x00)
                                     || (buf[12] == 0x88 && buf[13] == 0xa8));
}

static uint32_t valid_frame(uint8_t *buf, const uint8_t dst_mac[6], uint32_t src_ip,
                            uint32_t dst_ip) {
    uint32_t len = 96;
    memset(buf, 0, len);
    shape_ipv4_udp(buf, len, 5, dst_ip, src_ip);
    memcpy(buf, dst_mac, 6);
    memcpy(buf + 42, "netweft-valid-flow", 18);
    return len;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: frame_sender IFNAME valid|junk RATE SECONDS ...\n");
        return 2;
    }
    int valid = strcmp(argv[2], "valid") == 0;
    double rate = atof(argv[3]), seconds = atof(argv[4]);
    uint8_t dst_mac[6] = {0};
    uint32_t src_ip = 0, dst_ip = 0;
    uint64_t rng = 0x9e3779b97f4a7c15u;
    if (valid) {
        if (argc != 8 || sscanf(argv[5], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dst_mac[0],
                                &dst_mac[1], &dst_mac[2], &dst_mac[3], &dst_mac[4],
                                &dst_mac[5]) != 6
            || inet_pton(AF_INET, argv[6], &src_ip) != 1
            || inet_pton(AF_INET, argv[7], &dst_ip) != 1) {
            fprintf(stderr, "valid wants DST_MAC SRC_IP DST_IP\n");
            return 2;
        }
    } else if (argc == 6) {
        rng ^= strtoull(argv[5], NULL, 10) * 0x2545f4914f6cdd1du;
    }
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) { perror("socket"); return 1; }
    struct sockaddr_ll addr = {0};
    addr.sll_family = AF_PACKET;
    addr.sll_ifindex = (int)if_nametoindex(argv[1]);
    if (addr.sll_ifindex == 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror(argv[1]);
        return 1;
    }
    static uint8_t frames[BATCH][MAX_LEN];
    struct iovec iov[BATCH];
    struct mmsghdr msgs[BATCH];
    uint64_t sent = 0, refused = 0, vlan_short = 0, bytes = 0, start = now_ns();
    uint64_t end = start + (uint64_t)(seconds * 1e9), next = start;
    uint64_t gap = rate > 0 ? (uint64_t)(BATCH * 1e9 / rate) : 0;
    uint32_t batch = BATCH;
    if (valid && rate > 0 && rate < 2000) { batch = 1; gap = (uint64_t)(1e9 / rate); }
    for (uint32_t i = 0; valid && i < batch; i++)
        iov[i].iov_len = valid_frame(frames[i], dst_mac, src_ip, dst_ip);
    while (now_ns() < end) {
        for (uint32_t i = 0; i < batch; i++) {
            if (!valid) iov[i].iov_len = junk_frame(frames[i], &rng);
            iov[i].iov_base = frames[i];
            memset(&msgs[i], 0, sizeof msgs[i]);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        uint32_t done = 0;
        while (done < batch) {
            int n = sendmmsg(fd, msgs + done, batch - done, 0);
            if (n > 0) {
                for (uint32_t i = done; i < done + (uint32_t)n; i++) {
                    bytes += iov[i].iov_len;
                    vlan_short += (uint64_t)vlan_too_short(frames[i], (uint32_t)iov[i].iov_len);
                }
                sent += (uint64_t)n;
                done += (uint32_t)n;
            } else if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
                continue;                                /* the queue is full: retry */
            } else {
                refused++;                               /* this frame, not the rest */
                done++;
            }
        }
        if (gap) {
            next += gap;
            sleep_until(next);
        }
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("{\"sent\": %llu, \"refused\": %llu, \"vlan_short\": %llu, \"bytes\": %llu, "
           "\"seconds\": %.3f, \"cpu_s\": %.3f}\n",
           (unsigned long long)sent, (unsigned long long)refused,
           (unsigned long long)vlan_short, (unsigned long long)bytes,
           (double)(now_ns() - start) / 1e9,
           (double)usage.ru_utime.tv_sec + (double)usage.ru_stime.tv_sec
           + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6);
    return 0;
}

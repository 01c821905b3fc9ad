/* C-level check of the I/O driver under ASan/UBSan: two engines on loopback
 * (127.0.78.1 and 127.0.78.2, ephemeral ports) move a 4 MiB RMA write with
 * injected loss, in each transmit mode given on the command line
 * ("socket", "ports"), with GSO and GRO on; every byte is compared. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "io_driver.h"

#define SIZE (4u << 20)

static int bound_socket(uint32_t ip, uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(ip)};
    socklen_t l = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
        perror("socket");
        exit(1);
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static nw_io_t *start(nw_engine_t *e, int fd, uint32_t ip, uint32_t mode)
{
    nw_io_config_t c;
    nw_io_config_default(&c);
    c.rx_fd = fd;
    c.tx_mode = mode;
    c.flags = NW_IO_GSO | NW_IO_GRO;
    c.local_ip = ip;
    c.rx_drop_ppm = 10000;
    int32_t err;
    nw_io_t *io = nw_io_start(e, &c, &err);
    if (!io) {
        fprintf(stderr, "nw_io_start: %s\n", nw_strerror(err));
        exit(1);
    }
    return io;
}

int main(int argc, char **argv)
{
    uint32_t mode = (argc > 1 && strcmp(argv[1], "ports") == 0) ? NW_IO_TX_PORTS : NW_IO_TX_SOCKET;
    uint32_t ip_a = 0x7f004e01u, ip_b = 0x7f004e02u; /* 127.0.78.1, 127.0.78.2 */
    uint16_t port_a, port_b;
    int fd_a = bound_socket(ip_a, &port_a), fd_b = bound_socket(ip_b, &port_b);
    nw_config_t c;
    nw_config_default(&c);
    c.mtu = 8972;
    c.entropy_burst = 8;
    c.local_ip = ip_a;
    c.entropy_base = 41000;
    c.entropy_count = 8;
    nw_engine_t *a = nw_engine_new(&c);
    c.local_ip = ip_b;
    c.entropy_base = 42000;
    c.dst_port = port_a; /* b answers a's PDC at a's port */
    nw_engine_t *b = nw_engine_new(&c);
    if (!a || !b)
        return 1;
    uint8_t *src = malloc(SIZE), *dst = calloc(1, SIZE), *back = calloc(1, SIZE);
    for (uint32_t i = 0; i < SIZE; i++)
        src[i] = (uint8_t)(i * 2654435761u >> 13);
    nw_io_t *ia = start(a, fd_a, ip_a, mode), *ib = start(b, fd_b, ip_b, mode);
    uint32_t rkey, peer;
    if (nw_io_mr_register(ib, dst, SIZE, NW_ACCESS_REMOTE_WRITE | NW_ACCESS_REMOTE_READ, &rkey) ||
        nw_io_peer_add(ia, ip_b, port_b, NW_MODE_RUD, &peer) ||
        nw_io_post_write(ia, peer, 1, src, SIZE, rkey, 0) ||
        nw_io_post_read(ia, peer, 2, back, SIZE, rkey, 0)) {
        fprintf(stderr, "post failed\n");
        return 1;
    }
    nw_completion_t comp[4];
    int done = 0;
    while (done < 2) {
        int32_t n = nw_io_wait_cq(ia, comp, 4, 30000000000ll);
        if (n <= 0) {
            fprintf(stderr, "timed out\n");
            return 1;
        }
        for (int32_t i = 0; i < n; i++)
            if (comp[i].status != NW_OK) {
                fprintf(stderr, "wr %llu failed: %s\n", (unsigned long long)comp[i].wr_id,
                        nw_strerror(comp[i].status));
                return 1;
            }
        done += n;
    }
    nw_stats_t st;
    nw_io_stats_t ios;
    nw_io_stats_get(ib, &st, &ios);
    nw_io_stop(ia);
    nw_io_stop(ib);
    /* The read's bytes are not compared: on RUD it may overtake the write it
     * was posted after (its completion status is checked above). */
    if (memcmp(src, dst, SIZE) != 0) {
        fprintf(stderr, "write data differ\n");
        return 1;
    }
    if (ios.injected_drops == 0) {
        fprintf(stderr, "no loss was injected\n");
        return 1;
    }
    printf("io driver check passed (%s): %llu drops injected, %llu packets received\n",
           argc > 1 ? argv[1] : "socket", (unsigned long long)ios.injected_drops,
           (unsigned long long)ios.recv_pkts);
    nw_engine_free(a);
    nw_engine_free(b);
    free(src);
    free(dst);
    free(back);
    close(fd_a);
    close(fd_b);
    return 0;
}

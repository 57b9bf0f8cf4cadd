// SPDX-License-Identifier: GPL-2.0
/*
 * cm_fuzz - hostile Communication Manager MADs on the wire.
 *
 * Sends CM MADs (management class 0x07) from one RDMA port to another
 * port's QP1 through libibumad, with a send-only agent and a GRH (the
 * tests run it over soft-RoCE).  What it sends is decided by a seeded
 * pseudo-random generator alone: the same seed, count and addresses give
 * the same MADs, byte for byte (--dry-run prints them).
 *
 * The MADs come in blocks of 32 of one category:
 *   random      random payloads, valid header, every CM attribute ID and
 *               others from 0x0000-0x00ff and a few beyond
 *   header      valid-looking messages with a wrong base version, class
 *               version or method (ib_core's MAD layer drops these)
 *   boundary    valid-looking messages with one ranged field set to a
 *               boundary value (0, the largest valid value, one more, all
 *               ones)
 *   bitflip     copies of a valid REQ for a live listener with 1-4 bits
 *               flipped; one in eight repeats the previous copy
 *   live        messages naming live connections by their comm IDs
 *   flood_req   REQs with distinct comm IDs at a listener's service ID
 *   flood_sidr  SIDR_REQs with distinct request IDs at a UD listener
 *
 * At the end it prints how many MADs of each category went out and, by a
 * model of ib_core's receive filter (drivers/infiniband/core/mad.c), how
 * many of them the target's MAD layer drops and how many it hands to
 * ib_cm, by attribute.  The tests compare that with what the target
 * counted.  Output lines are "GROUP KEY VALUE".
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAD_SIZE	256
#define HDR		24	/* the common MAD header */
#define BLOCK		32	/* MADs per category block */
#define MAX_LIVE	64
#define QP1_QKEY	0x80010000u

/* MAD header fields */
#define BASE_VERSION	1
#define MGMT_CLASS_CM	0x07
#define CM_CLASS_VER	2
#define METHOD_GET	0x01
#define METHOD_SET	0x02
#define METHOD_SEND	0x03
#define METHOD_RESP	0x80
#define ATTR_CPI	0x0001	/* ClassPortInfo */

enum {
	ATTR_REQ = 0x10, ATTR_MRA, ATTR_REJ, ATTR_REP, ATTR_RTU, ATTR_DREQ,
	ATTR_DREP, ATTR_SIDR_REQ, ATTR_SIDR_REP, ATTR_LAP, ATTR_APR,
	ATTR_LAST = ATTR_APR
};

#define N_CM_ATTRS	(ATTR_LAST - ATTR_REQ + 1)

static const char * const attr_names[N_CM_ATTRS] = {
	"req", "mra", "rej", "rep", "rtu", "dreq", "drep", "sidr_req",
	"sidr_rep", "lap", "apr",
};

enum category {
	CAT_RANDOM, CAT_HEADER, CAT_BOUNDARY, CAT_BITFLIP, CAT_LIVE,
	CAT_FLOOD_REQ, CAT_FLOOD_SIDR, N_CATS
};

static const char * const cat_names[N_CATS] = {
	"random", "header", "boundary", "bitflip", "live", "flood_req",
	"flood_sidr",
};

static const unsigned int default_weights[N_CATS] = {
	25, 5, 20, 20, 10, 10, 10,
};

/* What ib_core's MAD layer does with a MAD we send (see mad_fate()). */
enum fate {
	FATE_CM,		/* handed to ib_cm's agent */
	FATE_BASE_VERSION,	/* validate_mad(): unknown base version */
	FATE_NOT_SEND,		/* validate_mad(): CM MAD, method not SEND */
	FATE_NO_AGENT,		/* no agent for class version and method */
	N_FATES
};

static const char * const fate_names[N_FATES] = {
	"to_cm", "base_version", "not_send", "no_agent",
};

struct live {
	u32 target_id;	/* the comm ID the target gave the connection */
	u32 peer_id;	/* the comm ID its peer (our port) gave it */
};

struct fuzz {
	u64 rng;
	u64 seed;
	unsigned long count;
	unsigned long rate;
	double duration;
	bool dry_run;
	int verbose;

	/* addresses */
	const char *dev;
	int port;
	int gid_index;
	u8 sgid[16];
	u8 dgid[16];
	u32 sip, dip;		/* IPv4, network order, 0 if none */
	u64 guid;		/* our CA GUID, host order */

	/* what to aim at */
	u64 service_id;		/* RC listener, 0 if none */
	u64 sidr_service_id;	/* UD listener, 0 if none */
	struct live live[MAX_LIVE];
	unsigned int n_live;
	u32 live_qpn[MAX_LIVE];
	unsigned int n_live_qpn;

	unsigned int weight[N_CATS];
	unsigned long max_bad_base;

	/* generator state */
	u32 tid;
	u32 flood_id, flood_qpn, sidr_id;
	unsigned long boundary_next;
	u8 last_flip[MAD_SIZE];
	bool have_last_flip;

	/* results */
	unsigned long sent[N_CATS];
	unsigned long fate[N_FATES];
	unsigned long to_cm[N_CM_ATTRS];
	unsigned long to_cm_unknown;
	unsigned long bad_base;
	unsigned long errors;
};

/* ---- pseudo-random numbers (splitmix64) --------------------------------- */

static u64 rnd(struct fuzz *f)
{
	u64 z = (f->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 rnd_below(struct fuzz *f, u32 n)
{
	return (u32)(rnd(f) % n);
}

static u32 rnd_nonzero32(struct fuzz *f)
{
	u32 v;

	do {
		v = (u32)rnd(f);
	} while (!v);
	return v;
}

static void rnd_fill(struct fuzz *f, u8 *p, size_t len)
{
	while (len--)
		*p++ = (u8)rnd(f);
}

/* ---- bit fields ----------------------------------------------------------
 *
 * IBTA fields are big-endian and not always byte aligned.  A field is
 * given by the byte in the MAD where it starts, the offset of its first
 * bit from that byte's most significant bit, and its width in bits.
 * Fields wider than 64 bits are byte aligned; they are set to all zeros
 * or all ones.
 */
struct field {
	u16 byte;
	u8 bit;
	u16 width;
};

static void set_field(u8 *mad, struct field fl, u64 v)
{
	unsigned int i, pos;

	if (fl.width > 64) {
		memset(mad + fl.byte, v ? 0xff : 0, fl.width / 8);
		return;
	}
	for (i = 0; i < fl.width; i++) {
		pos = fl.byte * 8 + fl.bit + i;
		if ((v >> (fl.width - 1 - i)) & 1)
			mad[pos / 8] |= 0x80 >> (pos % 8);
		else
			mad[pos / 8] &= ~(0x80 >> (pos % 8));
	}
}

/* F(byte in the attribute data, first bit, width): after the header. */
#define F(b, o, w)	((struct field){ HDR + (b), (o), (w) })
/* H(byte in the MAD header, first bit, width) */
#define H(b, o, w)	((struct field){ (b), (o), (w) })

/* The fields we fill in, by message (IBTA Vol 1 tables 106-120). */
#define LOCAL_COMM_ID	F(0, 0, 32)
#define REMOTE_COMM_ID	F(4, 0, 32)

#define REQ_SERVICE_ID	F(8, 0, 64)
#define REQ_CA_GUID	F(16, 0, 64)
#define REQ_QPN		F(32, 0, 24)
#define REQ_RESP_RES	F(35, 0, 8)
#define REQ_INIT_DEPTH	F(39, 0, 8)
#define REQ_REMOTE_TMO	F(43, 0, 5)
#define REQ_TRANSPORT	F(43, 5, 2)
#define REQ_E2E		F(43, 7, 1)
#define REQ_PSN		F(44, 0, 24)
#define REQ_LOCAL_TMO	F(47, 0, 5)
#define REQ_RETRY	F(47, 5, 3)
#define REQ_PKEY	F(48, 0, 16)
#define REQ_MTU		F(50, 0, 4)
#define REQ_RNR_RETRY	F(50, 5, 3)
#define REQ_MAX_RETRIES	F(51, 0, 4)
#define REQ_EXT_TRANS	F(51, 5, 3)
#define REQ_PRI_LLID	F(52, 0, 16)
#define REQ_PRI_RLID	F(54, 0, 16)
#define REQ_PRI_LGID	56
#define REQ_PRI_RGID	72
#define REQ_PRI_RATE	F(91, 2, 6)
#define REQ_PRI_HOP	F(93, 0, 8)
#define REQ_PRI_ACK_TMO	F(95, 0, 5)
#define REQ_PRIVATE	140

#define MRA_MSG		F(8, 0, 2)
#define MRA_TIMEOUT	F(9, 0, 5)

#define REJ_MSG		F(8, 0, 2)
#define REJ_INFO_LEN	F(9, 0, 7)
#define REJ_REASON	F(10, 0, 16)

#define REP_QPN		F(12, 0, 24)
#define REP_PSN		F(20, 0, 24)
#define REP_RESP_RES	F(24, 0, 8)
#define REP_INIT_DEPTH	F(25, 0, 8)
#define REP_ACK_DELAY	F(26, 0, 5)
#define REP_E2E		F(26, 7, 1)
#define REP_RNR_RETRY	F(27, 0, 3)
#define REP_CA_GUID	F(28, 0, 64)

#define DREQ_QPN	F(8, 0, 24)

#define SIDR_REQ_ID	F(0, 0, 32)
#define SIDR_REQ_PKEY	F(4, 0, 16)
#define SIDR_REQ_SID	F(8, 0, 64)
#define SIDR_REQ_PRIV	16

#define SIDR_REP_STATUS	F(4, 0, 8)
#define SIDR_REP_QPN	F(8, 0, 24)
#define SIDR_REP_SID	F(12, 0, 64)
#define SIDR_REP_QKEY	F(20, 0, 32)

#define LAP_QPN		F(12, 0, 24)
#define LAP_REMOTE_TMO	F(15, 0, 5)
#define LAP_ALT_LLID	F(20, 0, 16)
#define LAP_ALT_RLID	F(22, 0, 16)
#define LAP_ALT_LGID	24
#define LAP_ALT_RGID	40
#define LAP_ALT_HOP	F(60, 0, 8)
#define LAP_ALT_ACK_TMO	F(63, 0, 5)

#define APR_INFO_LEN	F(8, 0, 8)
#define APR_STATUS	F(9, 0, 8)

/* ---- messages ------------------------------------------------------------ */

static void mad_header(u8 *mad, u16 attr)
{
	memset(mad, 0, MAD_SIZE);
	mad[0] = BASE_VERSION;
	mad[1] = MGMT_CLASS_CM;
	mad[2] = CM_CLASS_VER;
	mad[3] = METHOD_SEND;
	mad[16] = attr >> 8;
	mad[17] = attr & 0xff;
}

static u16 mad_attr(const u8 *mad)
{
	return (u16)(mad[16] << 8 | mad[17]);
}

/*
 * rdma_cm's private data header (cma_hdr): version 0, IP version 4 in the
 * high nibble, the source port, then source and destination addresses as
 * 16-byte fields with IPv4 in the last four bytes.
 */
static void cma_header(struct fuzz *f, u8 *priv)
{
	u16 sport = 0x8000 | rnd_below(f, 0x8000);

	priv[0] = 0;
	priv[1] = 4 << 4;
	priv[2] = sport >> 8;
	priv[3] = sport & 0xff;
	memcpy(priv + 4 + 12, &f->sip, 4);
	memcpy(priv + 20 + 12, &f->dip, 4);
}

/*
 * A REQ such as rdma_cm sends on RoCE, with short timers: the target's
 * REP waits 256 ms for an RTU (local CM response timeout 16), three
 * times, and timewait lasts about 128 ms (local ACK timeout 14).
 */
static void build_req(struct fuzz *f, u8 *mad, u32 comm_id, u64 service_id,
		      u32 qpn, bool cma)
{
	mad_header(mad, ATTR_REQ);
	set_field(mad, LOCAL_COMM_ID, comm_id);
	set_field(mad, REQ_SERVICE_ID, service_id);
	set_field(mad, REQ_CA_GUID, f->guid);
	set_field(mad, REQ_QPN, qpn);
	set_field(mad, REQ_RESP_RES, 1);
	set_field(mad, REQ_INIT_DEPTH, 1);
	set_field(mad, REQ_REMOTE_TMO, 20);
	set_field(mad, REQ_TRANSPORT, 0);	/* RC */
	set_field(mad, REQ_E2E, 1);
	set_field(mad, REQ_PSN, rnd(f) & 0xffffff);
	set_field(mad, REQ_LOCAL_TMO, 16);
	set_field(mad, REQ_RETRY, 7);
	set_field(mad, REQ_PKEY, 0xffff);
	set_field(mad, REQ_MTU, 3);		/* 1024 */
	set_field(mad, REQ_RNR_RETRY, 7);
	set_field(mad, REQ_MAX_RETRIES, 3);
	set_field(mad, REQ_PRI_LLID, 0xffff);
	set_field(mad, REQ_PRI_RLID, 0xffff);
	memcpy(mad + HDR + REQ_PRI_LGID, f->sgid, 16);
	memcpy(mad + HDR + REQ_PRI_RGID, f->dgid, 16);
	set_field(mad, REQ_PRI_RATE, 3);
	set_field(mad, REQ_PRI_HOP, 64);
	set_field(mad, REQ_PRI_ACK_TMO, 14);
	if (cma)
		cma_header(f, mad + HDR + REQ_PRIVATE);
}

static void build_sidr_req(struct fuzz *f, u8 *mad, u32 req_id,
			   u64 service_id, bool cma)
{
	mad_header(mad, ATTR_SIDR_REQ);
	set_field(mad, SIDR_REQ_ID, req_id);
	set_field(mad, SIDR_REQ_PKEY, 0xffff);
	set_field(mad, SIDR_REQ_SID, service_id);
	if (cma)
		cma_header(f, mad + HDR + SIDR_REQ_PRIV);
}

/*
 * A plausible message of any CM attribute.  @local and @remote are the
 * comm IDs as the sender sees them (ours, then the target's).
 */
static void build_msg(struct fuzz *f, u8 *mad, u16 attr, u32 local,
		      u32 remote)
{
	switch (attr) {
	case ATTR_REQ:
		build_req(f, mad, local, rnd(f), rnd(f) & 0xffffff, false);
		return;
	case ATTR_SIDR_REQ:
		build_sidr_req(f, mad, local, rnd(f), false);
		return;
	}
	mad_header(mad, attr);
	set_field(mad, LOCAL_COMM_ID, local);
	set_field(mad, REMOTE_COMM_ID, remote);
	switch (attr) {
	case ATTR_MRA:
		set_field(mad, MRA_MSG, rnd_below(f, 3));
		set_field(mad, MRA_TIMEOUT, 16);
		break;
	case ATTR_REJ:
		set_field(mad, REJ_MSG, rnd_below(f, 3));
		set_field(mad, REJ_REASON, 1 + rnd_below(f, 33));
		break;
	case ATTR_REP:
		set_field(mad, REP_QPN, rnd(f) & 0xffffff);
		set_field(mad, REP_PSN, rnd(f) & 0xffffff);
		set_field(mad, REP_RESP_RES, 1);
		set_field(mad, REP_INIT_DEPTH, 1);
		set_field(mad, REP_ACK_DELAY, 15);
		set_field(mad, REP_E2E, 1);
		set_field(mad, REP_RNR_RETRY, 7);
		set_field(mad, REP_CA_GUID, f->guid);
		break;
	case ATTR_DREQ:
		set_field(mad, DREQ_QPN, f->n_live_qpn && rnd_below(f, 2) ?
		    f->live_qpn[rnd_below(f, f->n_live_qpn)] :
		    rnd(f) & 0xffffff);
		break;
	case ATTR_SIDR_REP:
		/* A SIDR_REP carries only the request ID. */
		set_field(mad, REMOTE_COMM_ID, 0);
		set_field(mad, SIDR_REP_STATUS, 0);
		set_field(mad, SIDR_REP_QPN, rnd(f) & 0xffffff);
		set_field(mad, SIDR_REP_SID, rnd(f));
		set_field(mad, SIDR_REP_QKEY, rnd(f));
		break;
	case ATTR_LAP:
		set_field(mad, LAP_QPN, rnd(f) & 0xffffff);
		set_field(mad, LAP_REMOTE_TMO, 16);
		set_field(mad, LAP_ALT_LLID, 0xffff);
		set_field(mad, LAP_ALT_RLID, 0xffff);
		memcpy(mad + HDR + LAP_ALT_LGID, f->sgid, 16);
		memcpy(mad + HDR + LAP_ALT_RGID, f->dgid, 16);
		set_field(mad, LAP_ALT_HOP, 64);
		set_field(mad, LAP_ALT_ACK_TMO, 14);
		break;
	case ATTR_APR:
		set_field(mad, APR_STATUS, 0);
		break;
	}
}

/* ---- boundary values -----------------------------------------------------
 *
 * Every field with a range, and the values at its edges: 0, the largest
 * valid value, one more where the field can hold it, and all ones.  The
 * category walks this table field by field, value by value.
 */
#define MAX_VALUES	10
#define ALL		0xffffffffffffffffULL

struct boundary {
	u16 attr;
	const char *name;
	struct field fl;
	u64 values[MAX_VALUES];
	unsigned int n;
};

#define B(a, nm, fld, ...) {						\
	.attr = (a), .name = (nm), .fl = fld,				\
	.values = { __VA_ARGS__ },					\
	.n = sizeof((u64[]){ __VA_ARGS__ }) / sizeof(u64),		\
}

static const struct boundary boundaries[] = {
	/* the MAD header as the CM reads it */
	B(ATTR_REQ, "req.attr_mod", H(20, 0, 32), 0, ALL),
	B(ATTR_REP, "rep.status", H(4, 0, 16), ALL),
	/* REQ */
	B(ATTR_REQ, "req.local_comm_id", LOCAL_COMM_ID, 0, 1, ALL),
	B(ATTR_REQ, "req.service_id", REQ_SERVICE_ID, 0, ALL,
	  0x0200000000000000ULL, 0x0000000001060000ULL),
	B(ATTR_REQ, "req.ca_guid", REQ_CA_GUID, 0, ALL),
	B(ATTR_REQ, "req.qpn", REQ_QPN, 0, 1, 0xffffff),
	B(ATTR_REQ, "req.responder_resources", REQ_RESP_RES, 0, 0xff),
	B(ATTR_REQ, "req.initiator_depth", REQ_INIT_DEPTH, 0, 0xff),
	B(ATTR_REQ, "req.remote_cm_response_timeout", REQ_REMOTE_TMO, 0, 31),
	B(ATTR_REQ, "req.transport_type", REQ_TRANSPORT, 0, 1, 2, 3),
	B(ATTR_REQ, "req.starting_psn", REQ_PSN, 0, 0xffffff),
	B(ATTR_REQ, "req.local_cm_response_timeout", REQ_LOCAL_TMO, 0, 31),
	B(ATTR_REQ, "req.retry_count", REQ_RETRY, 0, 7),
	B(ATTR_REQ, "req.pkey", REQ_PKEY, 0, 0x7fff, 0x8000, 0xffff),
	B(ATTR_REQ, "req.path_mtu", REQ_MTU, 0, 1, 5, 6, 15),
	B(ATTR_REQ, "req.rdc_exists", F(50, 4, 1), 1),
	B(ATTR_REQ, "req.rnr_retry_count", REQ_RNR_RETRY, 0, 7),
	B(ATTR_REQ, "req.max_cm_retries", REQ_MAX_RETRIES, 0, 15),
	B(ATTR_REQ, "req.srq", F(51, 4, 1), 1),
	B(ATTR_REQ, "req.extended_transport_type", REQ_EXT_TRANS,
	  1, 2, 7),
	B(ATTR_REQ, "req.primary_local_lid", REQ_PRI_LLID, 0, 0xffff),
	B(ATTR_REQ, "req.primary_remote_lid", REQ_PRI_RLID, 0, 0xffff),
	B(ATTR_REQ, "req.primary_local_gid", F(REQ_PRI_LGID, 0, 128), 0,
	  ALL),
	B(ATTR_REQ, "req.primary_remote_gid", F(REQ_PRI_RGID, 0, 128), 0,
	  ALL),
	B(ATTR_REQ, "req.primary_flow_label", F(88, 0, 20), 0, 0xfffff),
	B(ATTR_REQ, "req.primary_packet_rate", REQ_PRI_RATE, 0, 63),
	B(ATTR_REQ, "req.primary_traffic_class", F(92, 0, 8), 0xff),
	B(ATTR_REQ, "req.primary_hop_limit", REQ_PRI_HOP, 0, 1, 0xff),
	B(ATTR_REQ, "req.primary_sl", F(94, 0, 4), 15),
	B(ATTR_REQ, "req.primary_subnet_local", F(94, 4, 1), 1),
	B(ATTR_REQ, "req.primary_local_ack_timeout", REQ_PRI_ACK_TMO, 0,
	  31),
	B(ATTR_REQ, "req.alternate_local_lid", F(96, 0, 16), 1, 0xffff),
	B(ATTR_REQ, "req.alternate_local_gid", F(100, 0, 128), ALL),
	B(ATTR_REQ, "req.alternate_local_ack_timeout", F(139, 0, 5), 31),
	B(ATTR_REQ, "req.sap_supported", F(139, 5, 1), 1),
	B(ATTR_REQ, "req.cma_version", F(REQ_PRIVATE, 0, 8), 1, 0xff),
	B(ATTR_REQ, "req.cma_ip_version", F(REQ_PRIVATE + 1, 0, 8), 0,
	  0x60, 0xf0),
	B(ATTR_REQ, "req.private_data", F(REQ_PRIVATE, 0, 736), ALL),
	/* MRA */
	B(ATTR_MRA, "mra.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_MRA, "mra.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	B(ATTR_MRA, "mra.message_mraed", MRA_MSG, 0, 1, 2, 3),
	B(ATTR_MRA, "mra.service_timeout", MRA_TIMEOUT, 0, 31),
	/* REJ */
	B(ATTR_REJ, "rej.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_REJ, "rej.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	B(ATTR_REJ, "rej.message_rejected", REJ_MSG, 0, 1, 2, 3),
	B(ATTR_REJ, "rej.reject_info_length", REJ_INFO_LEN, 0, 72, 73, 127),
	B(ATTR_REJ, "rej.reason", REJ_REASON, 0, 1, 2, 8, 28, 33, 34, 35,
	  36, 0xffff),
	/* REP */
	B(ATTR_REP, "rep.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_REP, "rep.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	B(ATTR_REP, "rep.qpn", REP_QPN, 0, 0xffffff),
	B(ATTR_REP, "rep.starting_psn", REP_PSN, 0, 0xffffff),
	B(ATTR_REP, "rep.responder_resources", REP_RESP_RES, 0, 0xff),
	B(ATTR_REP, "rep.initiator_depth", REP_INIT_DEPTH, 0, 0xff),
	B(ATTR_REP, "rep.target_ack_delay", REP_ACK_DELAY, 0, 31),
	B(ATTR_REP, "rep.failover_accepted", F(26, 5, 2), 0, 1, 2, 3),
	B(ATTR_REP, "rep.rnr_retry_count", REP_RNR_RETRY, 0, 7),
	B(ATTR_REP, "rep.srq", F(27, 3, 1), 1),
	B(ATTR_REP, "rep.ca_guid", REP_CA_GUID, 0, ALL),
	/* RTU, DREQ, DREP */
	B(ATTR_RTU, "rtu.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_RTU, "rtu.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	B(ATTR_DREQ, "dreq.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_DREQ, "dreq.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	B(ATTR_DREQ, "dreq.remote_qpn", DREQ_QPN, 0, 0xffffff),
	B(ATTR_DREP, "drep.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_DREP, "drep.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	/* SIDR */
	B(ATTR_SIDR_REQ, "sidr_req.request_id", SIDR_REQ_ID, 0, ALL),
	B(ATTR_SIDR_REQ, "sidr_req.pkey", SIDR_REQ_PKEY, 0, 0x7fff, 0xffff),
	B(ATTR_SIDR_REQ, "sidr_req.service_id", SIDR_REQ_SID, 0, ALL,
	  0x0200000000000000ULL, 0x0000000001110000ULL),
	B(ATTR_SIDR_REQ, "sidr_req.cma_ip_version",
	  F(SIDR_REQ_PRIV + 1, 0, 8), 0, 0x60, 0xf0),
	B(ATTR_SIDR_REQ, "sidr_req.private_data", F(SIDR_REQ_PRIV, 0, 1728),
	  ALL),
	B(ATTR_SIDR_REP, "sidr_rep.request_id", SIDR_REQ_ID, 0, ALL),
	B(ATTR_SIDR_REP, "sidr_rep.status", SIDR_REP_STATUS, 0, 5, 6, 0xff),
	B(ATTR_SIDR_REP, "sidr_rep.info_length", F(5, 0, 8), 0, 72, 73,
	  0xff),
	B(ATTR_SIDR_REP, "sidr_rep.qpn", SIDR_REP_QPN, 0, 0xffffff),
	B(ATTR_SIDR_REP, "sidr_rep.qkey", SIDR_REP_QKEY, 0, ALL),
	/* LAP, APR */
	B(ATTR_LAP, "lap.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_LAP, "lap.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	B(ATTR_LAP, "lap.remote_qpn", LAP_QPN, 0, 0xffffff),
	B(ATTR_LAP, "lap.remote_cm_response_timeout", LAP_REMOTE_TMO, 0, 31),
	B(ATTR_LAP, "lap.alternate_local_lid", LAP_ALT_LLID, 0, 0xffff),
	B(ATTR_LAP, "lap.alternate_local_gid", F(LAP_ALT_LGID, 0, 128), 0,
	  ALL),
	B(ATTR_LAP, "lap.alternate_packet_rate", F(61, 2, 6), 0, 63),
	B(ATTR_LAP, "lap.alternate_local_ack_timeout", LAP_ALT_ACK_TMO, 0,
	  31),
	B(ATTR_APR, "apr.local_comm_id", LOCAL_COMM_ID, 0, ALL),
	B(ATTR_APR, "apr.remote_comm_id", REMOTE_COMM_ID, 0, ALL),
	B(ATTR_APR, "apr.additional_info_length", APR_INFO_LEN, 0, 72, 73,
	  0xff),
	B(ATTR_APR, "apr.ar_status", APR_STATUS, 0, 13, 14, 0xff),
};

#define N_BOUNDARIES	ARRAY_SIZE(boundaries)

/* ---- the categories ------------------------------------------------------ */

static const u16 extra_attrs[] = { 0x0100, 0x1000, 0x7fff, 0x8000, 0xffff };

static u16 random_attr(struct fuzz *f)
{
	u32 r;

	if (rnd_below(f, 2))
		return ATTR_REQ + rnd_below(f, N_CM_ATTRS);
	r = rnd_below(f, 256 + ARRAY_SIZE(extra_attrs));
	return r < 256 ? r : extra_attrs[r - 256];
}

static void gen_random(struct fuzz *f, u8 *mad)
{
	mad_header(mad, random_attr(f));
	rnd_fill(f, mad + HDR, MAD_SIZE - HDR);
}

static const u8 bad_base[] = { 0, 2, 3, 0x80, 0xff };
static const u8 bad_class_version[] = {
	0, 1, 3, 4, 0x7f, 0x80, 0x82, 0x83, 0xff,
};

/* Methods for ClassPortInfo, which passes the MAD layer's method check. */
static const u8 cpi_method[] = {
	METHOD_GET, METHOD_SET, METHOD_SEND, 0x81, 0x05,
};

static const u8 bad_method[] = {
	0x00, METHOD_GET, METHOD_SET, 0x04, 0x05, 0x06, 0x07, 0x12, 0x13,
	0x14, 0x81, 0x83, 0x86, 0xff,
};

/* One of an array's @n values, at random. */
static u8 pick(struct fuzz *f, const u8 *values, size_t n)
{
	return values[rnd_below(f, (u32)n)];
}

static void gen_header(struct fuzz *f, u8 *mad)
{
	u16 attr = ATTR_REQ + rnd_below(f, N_CM_ATTRS);
	u32 r = rnd_below(f, 8);
	u8 v;

	build_msg(f, mad, attr, rnd_nonzero32(f), (u32)rnd(f));
	/* Each wrong base version makes ib_core log a line: cap them. */
	if (r == 0 && f->bad_base >= f->max_bad_base)
		r = 1 + rnd_below(f, 7);
	switch (r) {
	case 0:
		mad[0] = pick(f, bad_base, ARRAY_SIZE(bad_base));
		f->bad_base++;
		break;
	case 1:
	case 2:
	case 3:
		if (rnd_below(f, 2))
			v = pick(f, bad_class_version,
				 ARRAY_SIZE(bad_class_version));
		else
			v = (u8)rnd(f);
		mad[2] = v == CM_CLASS_VER ? 0 : v;
		break;
	case 4:
	case 5:
	case 6:
		if (rnd_below(f, 2))
			v = pick(f, bad_method, ARRAY_SIZE(bad_method));
		else
			v = (u8)rnd(f);
		mad[3] = v == METHOD_SEND ? 0 : v;
		break;
	default:
		mad[16] = ATTR_CPI >> 8;
		mad[17] = ATTR_CPI & 0xff;
		mad[3] = pick(f, cpi_method, ARRAY_SIZE(cpi_method));
		if (rnd_below(f, 2))
			mad[2] = pick(f, bad_class_version,
				      ARRAY_SIZE(bad_class_version));
		break;
	}
}

static const struct live *pick_live(struct fuzz *f)
{
	return f->n_live ? &f->live[rnd_below(f, f->n_live)] : NULL;
}

static void gen_boundary(struct fuzz *f, u8 *mad)
{
	unsigned long k = f->boundary_next++;
	const struct boundary *b = &boundaries[k % N_BOUNDARIES];
	u64 v = b->values[(k / N_BOUNDARIES) % b->n];
	const struct live *l = pick_live(f);
	bool aim = rnd_below(f, 2);

	if (b->attr == ATTR_REQ && aim && f->service_id)
		build_req(f, mad, rnd_nonzero32(f), f->service_id,
			  rnd(f) & 0xffffff, true);
	else if (b->attr == ATTR_SIDR_REQ && aim && f->sidr_service_id)
		build_sidr_req(f, mad, rnd_nonzero32(f), f->sidr_service_id,
			       true);
	else if (l && aim)
		build_msg(f, mad, b->attr, l->peer_id, l->target_id);
	else
		build_msg(f, mad, b->attr, rnd_nonzero32(f), (u32)rnd(f));
	if (b->fl.width < 64)
		v &= (1ULL << b->fl.width) - 1;
	set_field(mad, b->fl, v);
	if (f->verbose > 1)
		fprintf(stderr, "boundary %s = %#llx\n", b->name,
			(unsigned long long)v);
}

static void gen_bitflip(struct fuzz *f, u8 *mad)
{
	unsigned int i, n, pos;

	if (f->have_last_flip && !rnd_below(f, 8)) {
		memcpy(mad, f->last_flip, MAD_SIZE);
		return;
	}
	build_req(f, mad, rnd_nonzero32(f), f->service_id, rnd(f) & 0xffffff,
		  true);
	/*
	 * Anything but the base version (bad_base covers it; each makes
	 * ib_core log a line), the management class (the MADs stay CM MADs)
	 * and the transaction ID (set on sending).
	 */
	n = 1 + rnd_below(f, 4);
	for (i = 0; i < n; i++) {
		do {
			pos = rnd_below(f, MAD_SIZE * 8);
		} while (pos < 16 || (pos >= 64 && pos < 128));
		mad[pos / 8] ^= 0x80 >> (pos % 8);
	}
	memcpy(f->last_flip, mad, MAD_SIZE);
	f->have_last_flip = true;
}

static const u16 live_attrs[] = {
	ATTR_REQ, ATTR_MRA, ATTR_REJ, ATTR_REP, ATTR_RTU, ATTR_DREQ,
	ATTR_DREP, ATTR_LAP, ATTR_APR,
};

static void gen_live(struct fuzz *f, u8 *mad)
{
	const struct live *l = pick_live(f);
	u16 attr = live_attrs[rnd_below(f, ARRAY_SIZE(live_attrs))];

	/* One in four with the IDs the wrong way round. */
	if (rnd_below(f, 4))
		build_msg(f, mad, attr, l->peer_id, l->target_id);
	else
		build_msg(f, mad, attr, l->target_id, l->peer_id);
}

static void gen_flood_req(struct fuzz *f, u8 *mad)
{
	build_req(f, mad, f->flood_id++, f->service_id,
		  f->flood_qpn++ & 0xffffff, true);
	if (!f->flood_id)
		f->flood_id = 1;
}

static void gen_flood_sidr(struct fuzz *f, u8 *mad)
{
	build_sidr_req(f, mad, f->sidr_id++, f->sidr_service_id, true);
}

static void (*const generators[N_CATS])(struct fuzz *f, u8 *mad) = {
	[CAT_RANDOM] = gen_random,
	[CAT_HEADER] = gen_header,
	[CAT_BOUNDARY] = gen_boundary,
	[CAT_BITFLIP] = gen_bitflip,
	[CAT_LIVE] = gen_live,
	[CAT_FLOOD_REQ] = gen_flood_req,
	[CAT_FLOOD_SIDR] = gen_flood_sidr,
};

static enum category pick_category(struct fuzz *f)
{
	unsigned int total = 0, r, c;

	for (c = 0; c < N_CATS; c++)
		total += f->weight[c];
	r = rnd_below(f, total);
	for (c = 0; c < N_CATS; c++) {
		if (r < f->weight[c])
			return c;
		r -= f->weight[c];
	}
	abort();
}

/*
 * What the target's MAD layer does with a CM MAD (ib_mad_recv_done() in
 * drivers/infiniband/core/mad.c): validate_mad() drops unknown base
 * versions, with a log line each, and CM MADs whose method is not SEND
 * unless the attribute is ClassPortInfo; find_mad_agent() routes
 * responses by the high half of the transaction ID (ours names no agent)
 * and everything else by class version and method, for which only ib_cm
 * registered (version 2, SEND).  Unmatched GET and SET get a "bad
 * method" response from the MAD layer; nothing else is answered.
 */
static enum fate mad_fate(const u8 *mad)
{
	if (mad[0] != BASE_VERSION)
		return FATE_BASE_VERSION;
	if (mad_attr(mad) != ATTR_CPI && mad[3] != METHOD_SEND)
		return FATE_NOT_SEND;
	if (mad[2] != CM_CLASS_VER || mad[3] != METHOD_SEND)
		return FATE_NO_AGENT;
	return FATE_CM;
}

static void set_tid(struct fuzz *f, u8 *mad)
{
	/*
	 * ib_umad replaces the high half of a request's TID with its agent's
	 * ID; a response keeps ours, which no agent has.
	 */
	u64 tid = (mad[3] & METHOD_RESP ? 0xffffffffULL << 32 : 0) | f->tid++;

	tid = htobe64(tid);
	memcpy(mad + 8, &tid, 8);
}

static void account(struct fuzz *f, enum category cat, const u8 *mad)
{
	enum fate fate = mad_fate(mad);
	u16 attr = mad_attr(mad);

	f->sent[cat]++;
	f->fate[fate]++;
	if (fate != FATE_CM)
		return;
	if (attr >= ATTR_REQ && attr <= ATTR_LAST)
		f->to_cm[attr - ATTR_REQ]++;
	else
		f->to_cm_unknown++;
}

/* ---- set-up -------------------------------------------------------------- */

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	int ret = -1;

	if (!fp)
		return -1;
	if (fgets(buf, (int)len, fp)) {
		buf[strcspn(buf, "\n")] = 0;
		ret = 0;
	}
	fclose(fp);
	return ret;
}

static int parse_gid(const char *s, u8 *gid)
{
	return inet_pton(AF_INET6, s, gid) == 1 ? 0 : -1;
}

static void ipv4_gid(u32 ip, u8 *gid)
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &ip, 4);
}

static bool gid_is_ipv4(const u8 *gid)
{
	static const u8 prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

/*
 * Our port's RoCE v2 GID for @sip (or its first IPv4 GID) and the CA
 * GUID, from sysfs.
 */
static int local_address(struct fuzz *f)
{
	char path[256], buf[128];
	unsigned int g[4];
	u8 gid[16];
	int i;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_guid",
		 f->dev);
	if (read_line(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%x:%x:%x:%x", &g[0], &g[1], &g[2], &g[3]) != 4) {
		fprintf(stderr, "cm_fuzz: no device %s\n", f->dev);
		return -1;
	}
	f->guid = (u64)g[0] << 48 | (u64)g[1] << 32 | (u64)g[2] << 16 | g[3];
	for (i = 0; i < 256; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
			 f->dev, f->port, i);
		if (read_line(path, buf, sizeof(buf)) ||
		    strcmp(buf, "RoCE v2"))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gids/%d",
			 f->dev, f->port, i);
		if (read_line(path, buf, sizeof(buf)) || parse_gid(buf, gid))
			continue;
		if (!gid_is_ipv4(gid))
			continue;
		if (f->sip && memcmp(gid + 12, &f->sip, 4))
			continue;
		f->gid_index = i;
		memcpy(f->sgid, gid, 16);
		memcpy(&f->sip, gid + 12, 4);
		return 0;
	}
	fprintf(stderr, "cm_fuzz: %s port %d has no IPv4 RoCE v2 GID\n",
		f->dev, f->port);
	return -1;
}

struct sender {
	int portid;
	int agent;
	void *umad;
};

static int sender_open(struct fuzz *f, struct sender *s)
{
	ib_mad_addr_t *addr;

	if (umad_init() < 0) {
		fprintf(stderr, "cm_fuzz: umad_init failed\n");
		return -1;
	}
	s->portid = umad_open_port(f->dev, f->port);
	if (s->portid < 0) {
		fprintf(stderr, "cm_fuzz: cannot open %s port %d: %s\n",
			f->dev, f->port, strerror(-s->portid));
		return -1;
	}
	/* Class 0: an agent that sends and never receives. */
	s->agent = umad_register(s->portid, 0, 0, 0, NULL);
	if (s->agent < 0) {
		fprintf(stderr, "cm_fuzz: cannot register a send agent\n");
		return -1;
	}
	s->umad = calloc(1, umad_size() + MAD_SIZE);
	if (!s->umad)
		return -1;
	umad_set_addr(s->umad, 0, 1, 0, QP1_QKEY);
	umad_set_pkey(s->umad, 0);
	addr = umad_get_mad_addr(s->umad);
	addr->grh_present = 1;
	addr->gid_index = (u8)f->gid_index;
	addr->hop_limit = 64;
	addr->traffic_class = 0;
	addr->flow_label = 0;
	memcpy(addr->gid, f->dgid, 16);
	return 0;
}

static int sender_send(struct sender *s, const u8 *mad)
{
	memcpy(umad_get_mad(s->umad), mad, MAD_SIZE);
	return umad_send(s->portid, s->agent, s->umad, MAD_SIZE, 0, 0);
}

static void sender_close(struct sender *s)
{
	if (s->portid >= 0)
		umad_close_port(s->portid);
	free(s->umad);
	umad_done();
}

/* ---- options ------------------------------------------------------------- */

static void help(void)
{
	fprintf(stderr,
		"usage: cm_fuzz -d DEV (-D IPV4 | --dgid GID) [options]\n"
		"  -d, --device DEV         send from this RDMA device\n"
		"  -p, --port N             and this port (1)\n"
		"  -D, --dip IPV4           the target's address (GID ::ffff:IPV4)\n"
		"      --dgid GID           or the target's GID\n"
		"  -I, --sip IPV4           our address, to pick our GID\n"
		"  -s, --seed N             the generator's seed (1)\n"
		"  -n, --count N            MADs to send (1000)\n"
		"  -r, --rate N             at most N MADs per second (0: no limit)\n"
		"  -t, --duration SECS      stop after SECS seconds\n"
		"  -S, --service-id ID      a live RC listener's service ID\n"
		"  -U, --sidr-service-id ID a live UD listener's service ID\n"
		"  -L, --live TARGET:PEER   a live connection's comm IDs, as the\n"
		"                           target and as we (its peer) know it\n"
		"  -Q, --live-qpn QPN       a live connection's QPN at the target\n"
		"  -m, --mix CAT=W,...      send only these categories, with\n"
		"                           these weights (random header\n"
		"                           boundary bitflip live flood_req\n"
		"                           flood_sidr)\n"
		"      --max-bad-base N     at most N wrong base versions (100)\n"
		"      --guid GUID          our CA GUID (--dry-run only)\n"
		"      --dry-run            print the MADs in hex, send nothing\n"
		"  -v, --verbose\n");
	exit(2);
}

static u64 parse_number(const char *s)
{
	char *end;
	u64 v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "cm_fuzz: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static u32 ipv4(const char *s)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1) {
		fprintf(stderr, "cm_fuzz: bad IPv4 address '%s'\n", s);
		exit(2);
	}
	return a.s_addr;
}

/* The categories named, with their weights, are the whole mix. */
static void parse_mix(struct fuzz *f, char *s)
{
	char *tok, *eq, *save;
	unsigned int c;

	memset(f->weight, 0, sizeof(f->weight));
	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq)
			help();
		*eq = 0;
		for (c = 0; c < N_CATS; c++)
			if (!strcmp(tok, cat_names[c]))
				break;
		if (c == N_CATS) {
			fprintf(stderr, "cm_fuzz: no category '%s'\n", tok);
			exit(2);
		}
		f->weight[c] = (unsigned int)parse_number(eq + 1);
	}
}

static void parse_live(struct fuzz *f, char *s)
{
	char *colon = strchr(s, ':');

	if (!colon || f->n_live == MAX_LIVE)
		help();
	*colon = 0;
	f->live[f->n_live].target_id = (u32)parse_number(s);
	f->live[f->n_live].peer_id = (u32)parse_number(colon + 1);
	f->n_live++;
}

enum { OPT_DGID = 256, OPT_MAX_BAD_BASE, OPT_GUID, OPT_DRY_RUN };

static const struct option options[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "port", required_argument, NULL, 'p' },
	{ "dip", required_argument, NULL, 'D' },
	{ "dgid", required_argument, NULL, OPT_DGID },
	{ "sip", required_argument, NULL, 'I' },
	{ "seed", required_argument, NULL, 's' },
	{ "count", required_argument, NULL, 'n' },
	{ "rate", required_argument, NULL, 'r' },
	{ "duration", required_argument, NULL, 't' },
	{ "service-id", required_argument, NULL, 'S' },
	{ "sidr-service-id", required_argument, NULL, 'U' },
	{ "live", required_argument, NULL, 'L' },
	{ "live-qpn", required_argument, NULL, 'Q' },
	{ "mix", required_argument, NULL, 'm' },
	{ "max-bad-base", required_argument, NULL, OPT_MAX_BAD_BASE },
	{ "guid", required_argument, NULL, OPT_GUID },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ }
};

static void parse_options(struct fuzz *f, int argc, char **argv)
{
	bool have_dgid = false;
	int c;

	while ((c = getopt_long(argc, argv, "d:p:D:I:s:n:r:t:S:U:L:Q:m:vh",
				options, NULL)) != -1) {
		switch (c) {
		case 'd':
			f->dev = optarg;
			break;
		case 'p':
			f->port = (int)parse_number(optarg);
			break;
		case 'D':
			f->dip = ipv4(optarg);
			ipv4_gid(f->dip, f->dgid);
			have_dgid = true;
			break;
		case OPT_DGID:
			if (parse_gid(optarg, f->dgid))
				help();
			if (gid_is_ipv4(f->dgid))
				memcpy(&f->dip, f->dgid + 12, 4);
			have_dgid = true;
			break;
		case 'I':
			f->sip = ipv4(optarg);
			break;
		case 's':
			f->seed = parse_number(optarg);
			break;
		case 'n':
			f->count = parse_number(optarg);
			break;
		case 'r':
			f->rate = parse_number(optarg);
			break;
		case 't':
			f->duration = strtod(optarg, NULL);
			break;
		case 'S':
			f->service_id = parse_number(optarg);
			break;
		case 'U':
			f->sidr_service_id = parse_number(optarg);
			break;
		case 'L':
			parse_live(f, optarg);
			break;
		case 'Q':
			if (f->n_live_qpn == MAX_LIVE)
				help();
			f->live_qpn[f->n_live_qpn++] =
				(u32)parse_number(optarg);
			break;
		case 'm':
			parse_mix(f, optarg);
			break;
		case OPT_MAX_BAD_BASE:
			f->max_bad_base = parse_number(optarg);
			break;
		case OPT_GUID:
			f->guid = parse_number(optarg);
			break;
		case OPT_DRY_RUN:
			f->dry_run = true;
			break;
		case 'v':
			f->verbose++;
			break;
		default:
			help();
		}
	}
	if (optind != argc || !have_dgid || (!f->dev && !f->dry_run))
		help();
}

/* Categories that need something we were not given are left out. */
static void check_weights(struct fuzz *f)
{
	unsigned int c, total = 0;

	if (!f->service_id) {
		f->weight[CAT_BITFLIP] = 0;
		f->weight[CAT_FLOOD_REQ] = 0;
	}
	if (!f->sidr_service_id)
		f->weight[CAT_FLOOD_SIDR] = 0;
	if (!f->n_live)
		f->weight[CAT_LIVE] = 0;
	for (c = 0; c < N_CATS; c++)
		total += f->weight[c];
	if (!total) {
		fprintf(stderr, "cm_fuzz: every category has weight 0\n");
		exit(2);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pace(struct fuzz *f, double start, unsigned long done)
{
	double ahead;
	struct timespec ts;

	if (!f->rate)
		return;
	ahead = start + (double)done / (double)f->rate - now();
	if (ahead <= 0)
		return;
	ts.tv_sec = (time_t)ahead;
	ts.tv_nsec = (long)((ahead - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void print_hex(enum category cat, const u8 *mad)
{
	int i;

	printf("%s ", cat_names[cat]);
	for (i = 0; i < MAD_SIZE; i++)
		printf("%02x", mad[i]);
	printf("\n");
}

static void report(struct fuzz *f, unsigned long sent, double elapsed)
{
	unsigned int i;

	printf("cm_fuzz seed %llu\n", (unsigned long long)f->seed);
	printf("cm_fuzz sent %lu\n", sent);
	printf("cm_fuzz errors %lu\n", f->errors);
	printf("cm_fuzz elapsed_ms %.0f\n", elapsed * 1000);
	printf("cm_fuzz rate %.0f\n", elapsed > 0 ? sent / elapsed : 0.0);
	for (i = 0; i < N_CATS; i++)
		printf("sent %s %lu\n", cat_names[i], f->sent[i]);
	for (i = 0; i < N_FATES; i++)
		printf("mad %s %lu\n", fate_names[i], f->fate[i]);
	for (i = 0; i < N_CM_ATTRS; i++)
		printf("cm %s %lu\n", attr_names[i], f->to_cm[i]);
	printf("cm unknown %lu\n", f->to_cm_unknown);
}

int main(int argc, char **argv)
{
	struct fuzz *f = calloc(1, sizeof(*f));
	struct sender s = { .portid = -1 };
	enum category cat = CAT_RANDOM;
	unsigned long i, sent = 0, failed_in_row = 0;
	double start, elapsed;
	u8 mad[MAD_SIZE];
	int ret;

	if (!f)
		return 1;
	f->port = 1;
	f->seed = 1;
	f->count = 1000;
	f->max_bad_base = 100;
	memcpy(f->weight, default_weights, sizeof(f->weight));
	parse_options(f, argc, argv);
	check_weights(f);
	if (!f->dry_run && local_address(f))
		return 1;
	if (f->dry_run && f->sip)
		ipv4_gid(f->sip, f->sgid);

	f->rng = f->seed;
	f->tid = (u32)rnd(f);
	f->flood_id = rnd_nonzero32(f);
	f->flood_qpn = (u32)rnd(f);
	f->sidr_id = (u32)rnd(f);

	if (!f->dry_run && sender_open(f, &s))
		return 1;
	if (f->verbose) {
		char sg[INET6_ADDRSTRLEN], dg[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, f->sgid, sg, sizeof(sg));
		inet_ntop(AF_INET6, f->dgid, dg, sizeof(dg));
		fprintf(stderr,
			"cm_fuzz: %s port %d gid %d %s -> %s, guid %#llx, seed %llu, %lu MADs\n",
			f->dev ? f->dev : "-", f->port, f->gid_index, sg, dg,
			(unsigned long long)f->guid,
			(unsigned long long)f->seed, f->count);
	}

	start = now();
	for (i = 0; i < f->count; i++) {
		if (i % BLOCK == 0) {
			if (f->duration > 0 && now() - start >= f->duration)
				break;
			cat = pick_category(f);
		}
		generators[cat](f, mad);
		set_tid(f, mad);
		if (f->dry_run) {
			print_hex(cat, mad);
			account(f, cat, mad);
			sent++;
			continue;
		}
		pace(f, start, sent);
		ret = sender_send(&s, mad);
		if (ret < 0) {
			f->errors++;
			if (f->verbose)
				fprintf(stderr, "cm_fuzz: send %lu: %s\n", i,
					strerror(errno));
			if (++failed_in_row >= 1000) {
				fprintf(stderr, "cm_fuzz: sending fails\n");
				break;
			}
			continue;
		}
		failed_in_row = 0;
		account(f, cat, mad);
		sent++;
	}
	elapsed = now() - start;
	if (!f->dry_run)
		sender_close(&s);
	report(f, sent, elapsed);
	free(f);
	return failed_in_row >= 1000;
}

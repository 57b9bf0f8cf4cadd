/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wire format of the InfiniBand Communication Management messages
 * (IBTA Vol 1, chapter 12, class version 2).
 *
 * Every CM message is a 256-byte MAD: the 24-byte common MAD header
 * followed by 232 bytes of attribute data.  The attribute data is a
 * big-endian bit string in which many fields are neither byte sized nor
 * byte aligned (24-bit QPNs and PSNs, 5-bit timeouts, 2-bit flags...).
 *
 * Each field is described exactly once below, as its position in the
 * attribute data: the byte that holds its most significant bit, the bit
 * inside that byte counted from the most significant end (0..7, as the
 * IBTA tables count), and its width in bits.  All reads and writes go
 * through cm_get()/cm_set() and cm_field_ptr(), which work for any such
 * position, so no message code ever shifts or masks by hand.
 */
#ifndef IB_CM_MSGS_H
#define IB_CM_MSGS_H

#include <linux/bits.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/types.h>
#include <rdma/ib_mad.h>

/* The CM class version this module speaks. */
#define CM_CLASS_VERSION	2

/* Number of bytes of attribute data after the common MAD header. */
#define CM_DATA_BYTES		IB_MGMT_MAD_DATA

/**
 * struct cm_mad - a CM MAD as it lies in a send or receive buffer
 * @hdr: the common MAD header (management class, method, attribute ID...)
 * @data: the attribute data, addressed only through the field accessors
 */
struct cm_mad {
	struct ib_mad_hdr hdr;
	u8 data[CM_DATA_BYTES];
};

static_assert(sizeof(struct cm_mad) == IB_MGMT_MAD_SIZE);

/*
 * A field description packs the bit position of the field's most
 * significant bit (counted from the start of the attribute data) into the
 * upper half of a u32 and the width in bits into the lower half.
 */
#define CMF(byte, bit, width)	((((byte) * 8 + (bit)) << 16) | (width))

static inline unsigned int cm_field_pos(u32 field)
{
	return field >> 16;
}

static inline unsigned int cm_field_width(u32 field)
{
	return field & 0xffff;
}

/**
 * cm_get() - read a field of a CM message
 * @mad: the message
 * @field: one of the CM_<MSG>_<FIELD> descriptions below (at most 64 bits)
 *
 * Return: the field's value in host order, zero extended.
 */
static __always_inline u64 cm_get(const struct cm_mad *mad, u32 field)
{
	unsigned int pos = cm_field_pos(field);
	unsigned int width = cm_field_width(field);
	unsigned int last = (pos + width - 1) / 8;
	unsigned int i;
	u64 val = 0;

	for (i = pos / 8; i <= last; i++)
		val = (val << 8) | mad->data[i];
	val >>= 7 - ((pos + width - 1) % 8);
	if (width < 64)
		val &= GENMASK_ULL(width - 1, 0);
	return val;
}

/**
 * cm_set() - write a field of a CM message
 * @mad: the message
 * @field: one of the CM_<MSG>_<FIELD> descriptions below (at most 64 bits)
 * @val: the value in host order; bits beyond the field's width are dropped
 *
 * Bits of neighbouring fields, even those sharing a byte, are untouched.
 */
static __always_inline void cm_set(struct cm_mad *mad, u32 field, u64 val)
{
	unsigned int width = cm_field_width(field);
	unsigned int end = cm_field_pos(field) + width; /* past the last bit */

	while (width) {
		unsigned int byte = (end - 1) / 8;
		unsigned int shift = 7 - ((end - 1) % 8);
		unsigned int n = min(width, 8 - shift);
		u8 mask = GENMASK(shift + n - 1, shift);

		mad->data[byte] = (mad->data[byte] & ~mask) |
				  ((val << shift) & mask);
		val = n < 64 ? val >> n : 0;
		width -= n;
		end -= n;
	}
}

/**
 * cm_field_ptr() - address of a byte-aligned field (GIDs, data blocks)
 * @mad: the message
 * @field: a field that starts on a byte boundary
 *
 * Return: a pointer into @mad where the field's first byte lies.
 */
static inline void *cm_field_ptr(struct cm_mad *mad, u32 field)
{
	return mad->data + cm_field_pos(field) / 8;
}

/**
 * cm_field_bytes() - size of a field in whole bytes
 * @field: a field description
 *
 * Return: the width of @field rounded down to bytes.
 */
static inline size_t cm_field_bytes(u32 field)
{
	return cm_field_width(field) / 8;
}

/* REQ: request for communication (attribute 0x0010). */
#define CM_REQ_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_REQ_VENDOR_ID		CMF(5, 0, 24)
#define CM_REQ_SERVICE_ID		CMF(8, 0, 64)
#define CM_REQ_LOCAL_CA_GUID		CMF(16, 0, 64)
#define CM_REQ_LOCAL_Q_KEY		CMF(28, 0, 32)
#define CM_REQ_LOCAL_QPN		CMF(32, 0, 24)
#define CM_REQ_RESPONDER_RESOURCES	CMF(35, 0, 8)
#define CM_REQ_LOCAL_EECN		CMF(36, 0, 24)
#define CM_REQ_INITIATOR_DEPTH		CMF(39, 0, 8)
#define CM_REQ_REMOTE_EECN		CMF(40, 0, 24)
#define CM_REQ_REMOTE_CM_RESP_TIMEOUT	CMF(43, 0, 5)
#define CM_REQ_TRANSPORT_SERVICE	CMF(43, 5, 2)
#define CM_REQ_END_TO_END_FLOW_CTRL	CMF(43, 7, 1)
#define CM_REQ_STARTING_PSN		CMF(44, 0, 24)
#define CM_REQ_LOCAL_CM_RESP_TIMEOUT	CMF(47, 0, 5)
#define CM_REQ_RETRY_COUNT		CMF(47, 5, 3)
#define CM_REQ_PARTITION_KEY		CMF(48, 0, 16)
#define CM_REQ_PATH_MTU			CMF(50, 0, 4)
#define CM_REQ_RDC_EXISTS		CMF(50, 4, 1)
#define CM_REQ_RNR_RETRY_COUNT		CMF(50, 5, 3)
#define CM_REQ_MAX_CM_RETRIES		CMF(51, 0, 4)
#define CM_REQ_SRQ			CMF(51, 4, 1)
#define CM_REQ_EXT_TRANSPORT		CMF(51, 5, 3)
#define CM_REQ_PRI_LOCAL_LID		CMF(52, 0, 16)
#define CM_REQ_PRI_REMOTE_LID		CMF(54, 0, 16)
#define CM_REQ_PRI_LOCAL_GID		CMF(56, 0, 128)
#define CM_REQ_PRI_REMOTE_GID		CMF(72, 0, 128)
#define CM_REQ_PRI_FLOW_LABEL		CMF(88, 0, 20)
#define CM_REQ_PRI_PACKET_RATE		CMF(91, 2, 6)
#define CM_REQ_PRI_TRAFFIC_CLASS	CMF(92, 0, 8)
#define CM_REQ_PRI_HOP_LIMIT		CMF(93, 0, 8)
#define CM_REQ_PRI_SL			CMF(94, 0, 4)
#define CM_REQ_PRI_SUBNET_LOCAL		CMF(94, 4, 1)
#define CM_REQ_PRI_LOCAL_ACK_TIMEOUT	CMF(95, 0, 5)
#define CM_REQ_ALT_LOCAL_LID		CMF(96, 0, 16)
#define CM_REQ_ALT_REMOTE_LID		CMF(98, 0, 16)
#define CM_REQ_ALT_LOCAL_GID		CMF(100, 0, 128)
#define CM_REQ_ALT_REMOTE_GID		CMF(116, 0, 128)
#define CM_REQ_ALT_FLOW_LABEL		CMF(132, 0, 20)
#define CM_REQ_ALT_PACKET_RATE		CMF(135, 2, 6)
#define CM_REQ_ALT_TRAFFIC_CLASS	CMF(136, 0, 8)
#define CM_REQ_ALT_HOP_LIMIT		CMF(137, 0, 8)
#define CM_REQ_ALT_SL			CMF(138, 0, 4)
#define CM_REQ_ALT_SUBNET_LOCAL		CMF(138, 4, 1)
#define CM_REQ_ALT_LOCAL_ACK_TIMEOUT	CMF(139, 0, 5)
#define CM_REQ_SAP_SUPPORTED		CMF(139, 5, 1)
#define CM_REQ_PRIVATE_DATA		CMF(140, 0, 92 * 8)

/* Values of the REQ transport service type fields. */
#define CM_REQ_TRANSPORT_RC		0
#define CM_REQ_TRANSPORT_UC		1
#define CM_REQ_TRANSPORT_EXTENDED	3
#define CM_REQ_EXT_TRANSPORT_XRC	1

/* MRA: message receipt acknowledgment (0x0011). */
#define CM_MRA_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_MRA_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_MRA_MESSAGE_MRAED		CMF(8, 0, 2)
#define CM_MRA_SERVICE_TIMEOUT		CMF(9, 0, 5)
#define CM_MRA_PRIVATE_DATA		CMF(10, 0, 222 * 8)

/* REJ: reject (0x0012). */
#define CM_REJ_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_REJ_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_REJ_MESSAGE_REJECTED		CMF(8, 0, 2)
#define CM_REJ_ARI_LENGTH		CMF(9, 0, 7)
#define CM_REJ_REASON			CMF(10, 0, 16)
#define CM_REJ_ARI			CMF(12, 0, 72 * 8)
#define CM_REJ_PRIVATE_DATA		CMF(84, 0, 148 * 8)

/* Which message an MRA or REJ refers to (Message MRAed / Rejected). */
#define CM_MSG_RESPONSE_REQ		0
#define CM_MSG_RESPONSE_REP		1
#define CM_MSG_RESPONSE_OTHER		2

/* REP: reply to request for communication (0x0013). */
#define CM_REP_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_REP_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_REP_LOCAL_Q_KEY		CMF(8, 0, 32)
#define CM_REP_LOCAL_QPN		CMF(12, 0, 24)
#define CM_REP_VENDOR_ID_H		CMF(15, 0, 8)
#define CM_REP_LOCAL_EECN		CMF(16, 0, 24)
#define CM_REP_VENDOR_ID_M		CMF(19, 0, 8)
#define CM_REP_STARTING_PSN		CMF(20, 0, 24)
#define CM_REP_VENDOR_ID_L		CMF(23, 0, 8)
#define CM_REP_RESPONDER_RESOURCES	CMF(24, 0, 8)
#define CM_REP_INITIATOR_DEPTH		CMF(25, 0, 8)
#define CM_REP_TARGET_ACK_DELAY		CMF(26, 0, 5)
#define CM_REP_FAILOVER_ACCEPTED	CMF(26, 5, 2)
#define CM_REP_END_TO_END_FLOW_CTRL	CMF(26, 7, 1)
#define CM_REP_RNR_RETRY_COUNT		CMF(27, 0, 3)
#define CM_REP_SRQ			CMF(27, 3, 1)
#define CM_REP_LOCAL_CA_GUID		CMF(28, 0, 64)
#define CM_REP_PRIVATE_DATA		CMF(36, 0, 196 * 8)

/* RTU: ready to use (0x0014). */
#define CM_RTU_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_RTU_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_RTU_PRIVATE_DATA		CMF(8, 0, 224 * 8)

/* DREQ: request for communication release (0x0015). */
#define CM_DREQ_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_DREQ_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_DREQ_REMOTE_QPN		CMF(8, 0, 24)
#define CM_DREQ_PRIVATE_DATA		CMF(12, 0, 220 * 8)

/* DREP: reply to request for communication release (0x0016). */
#define CM_DREP_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_DREP_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_DREP_PRIVATE_DATA		CMF(8, 0, 224 * 8)

/* SIDR_REQ: service ID resolution request (0x0017). */
#define CM_SIDR_REQ_REQUEST_ID		CMF(0, 0, 32)
#define CM_SIDR_REQ_PARTITION_KEY	CMF(4, 0, 16)
#define CM_SIDR_REQ_SERVICE_ID		CMF(8, 0, 64)
#define CM_SIDR_REQ_PRIVATE_DATA	CMF(16, 0, 216 * 8)

/* SIDR_REP: service ID resolution response (0x0018). */
#define CM_SIDR_REP_REQUEST_ID		CMF(0, 0, 32)
#define CM_SIDR_REP_STATUS		CMF(4, 0, 8)
#define CM_SIDR_REP_INFO_LENGTH		CMF(5, 0, 8)
#define CM_SIDR_REP_VENDOR_ID_H		CMF(6, 0, 16)
#define CM_SIDR_REP_QPN			CMF(8, 0, 24)
#define CM_SIDR_REP_VENDOR_ID_L		CMF(11, 0, 8)
#define CM_SIDR_REP_SERVICE_ID		CMF(12, 0, 64)
#define CM_SIDR_REP_Q_KEY		CMF(20, 0, 32)
#define CM_SIDR_REP_INFO		CMF(24, 0, 72 * 8)
#define CM_SIDR_REP_PRIVATE_DATA	CMF(96, 0, 136 * 8)

/* LAP: load alternate path (0x0019). */
#define CM_LAP_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_LAP_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_LAP_REMOTE_QPN		CMF(12, 0, 24)
#define CM_LAP_REMOTE_CM_RESP_TIMEOUT	CMF(15, 0, 5)
#define CM_LAP_ALT_LOCAL_LID		CMF(20, 0, 16)
#define CM_LAP_ALT_REMOTE_LID		CMF(22, 0, 16)
#define CM_LAP_ALT_LOCAL_GID		CMF(24, 0, 128)
#define CM_LAP_ALT_REMOTE_GID		CMF(40, 0, 128)
#define CM_LAP_ALT_FLOW_LABEL		CMF(56, 0, 20)
#define CM_LAP_ALT_TRAFFIC_CLASS	CMF(59, 0, 8)
#define CM_LAP_ALT_HOP_LIMIT		CMF(60, 0, 8)
#define CM_LAP_ALT_PACKET_RATE		CMF(61, 2, 6)
#define CM_LAP_ALT_SL			CMF(62, 0, 4)
#define CM_LAP_ALT_SUBNET_LOCAL		CMF(62, 4, 1)
#define CM_LAP_ALT_LOCAL_ACK_TIMEOUT	CMF(63, 0, 5)
#define CM_LAP_PRIVATE_DATA		CMF(64, 0, 168 * 8)

/* APR: alternate path response (0x001A). */
#define CM_APR_LOCAL_COMM_ID		CMF(0, 0, 32)
#define CM_APR_REMOTE_COMM_ID		CMF(4, 0, 32)
#define CM_APR_INFO_LENGTH		CMF(8, 0, 8)
#define CM_APR_STATUS			CMF(9, 0, 8)
#define CM_APR_INFO			CMF(12, 0, 72 * 8)
#define CM_APR_PRIVATE_DATA		CMF(84, 0, 148 * 8)

#endif /* IB_CM_MSGS_H */

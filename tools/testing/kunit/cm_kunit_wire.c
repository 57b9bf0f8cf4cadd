// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_wire: the wire codec
 *
 * The fields are those of <rdma/ibta_vol1_c12.h>, read and written through
 * the accessors of <rdma/iba.h>.  Each test below works out where a field
 * lies from its description alone and checks the accessors against that,
 * bit by bit.
 */

#include <kunit/test.h>
#include <linux/random.h>

/* Bytes of attribute data after the common MAD header. */
#define CM_DATA_BYTES		IB_MGMT_MAD_DATA

/* Any CM message: the fake peer builds and reads several kinds in one. */
union cm_kunit_msg {
	struct ib_mad mad;
	struct cm_req_msg req;
	struct cm_mra_msg mra;
	struct cm_rej_msg rej;
	struct cm_rep_msg rep;
	struct cm_rtu_msg rtu;
	struct cm_dreq_msg dreq;
	struct cm_drep_msg drep;
	struct cm_sidr_req_msg sidr_req;
	struct cm_sidr_rep_msg sidr_rep;
	struct cm_lap_msg lap;
	struct cm_apr_msg apr;
};

/* The attribute IDs of the CM's messages, in order. */
static const __be16 cm_kunit_attrs[] = {
	CM_REQ_ATTR_ID, CM_MRA_ATTR_ID, CM_REJ_ATTR_ID, CM_REP_ATTR_ID,
	CM_RTU_ATTR_ID, CM_DREQ_ATTR_ID, CM_DREP_ATTR_ID, CM_SIDR_REQ_ATTR_ID,
	CM_SIDR_REP_ATTR_ID, CM_LAP_ATTR_ID, CM_APR_ATTR_ID,
};

/**
 * struct cm_kunit_field - one field of a CM message, for the wire tests
 * @name: its name in <rdma/ibta_vol1_c12.h>
 * @attr: attribute ID of its message
 * @msg_size: size of its message's struct
 * @offset: byte offset (from the start of the MAD) of the big-endian word
 *	that holds a number field, or of a byte field
 * @bit_mask: a number field's bits in that word, in CPU order
 * @word_bits: width of that word (8 to 64), or of a byte field
 * @gid: a byte field holding a GID
 * @get: reads a number field through IBA_GET()
 * @set: writes a number field through IBA_SET()
 * @ptr: a byte field's address, from IBA_GET_MEM_PTR()
 *
 * The description is the header's own, unchanged; cm_kunit_pos() and
 * cm_kunit_width() work out from it where the field lies.
 */
struct cm_kunit_field {
	const char *name;
	__be16 attr;
	size_t msg_size;
	unsigned int offset;
	u64 bit_mask;
	unsigned int word_bits;
	bool gid;
	u64 (*get)(const struct ib_mad *mad);
	void (*set)(struct ib_mad *mad, u64 val);
	void *(*ptr)(struct ib_mad *mad);
};

/*
 * The accessors of one field, named after it (cm_kunit_<FIELD>_get ...).
 * The inner macros see the field's expansion, so they use the underscore
 * forms of the <rdma/iba.h> accessors, which take it as it is.
 */
#define _CM_KUNIT_ACCESSORS(name, ...)					\
static u64 name##_get(const struct ib_mad *mad)				\
{									\
	return _IBA_GET(__VA_ARGS__, (const void *)mad);		\
}									\
									\
static void name##_set(struct ib_mad *mad, u64 val)			\
{									\
	_IBA_SET(__VA_ARGS__, (void *)mad, val);			\
}

#define _CM_KUNIT_BYTE_ACCESSOR(name, ...)				\
static void *name##_ptr(struct ib_mad *mad)				\
{									\
	return _IBA_GET_MEM_PTR(__VA_ARGS__, (void *)mad);		\
}

#define CM_KUNIT_ACCESSORS(f)	_CM_KUNIT_ACCESSORS(cm_kunit_##f, f)
#define CM_KUNIT_BYTE_ACCESSOR(f) _CM_KUNIT_BYTE_ACCESSOR(cm_kunit_##f, f)

CM_KUNIT_ACCESSORS(CM_REQ_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_REQ_VENDOR_ID)
CM_KUNIT_ACCESSORS(CM_REQ_SERVICE_ID)
CM_KUNIT_ACCESSORS(CM_REQ_LOCAL_CA_GUID)
CM_KUNIT_ACCESSORS(CM_REQ_LOCAL_Q_KEY)
CM_KUNIT_ACCESSORS(CM_REQ_LOCAL_QPN)
CM_KUNIT_ACCESSORS(CM_REQ_RESPONDER_RESOURCES)
CM_KUNIT_ACCESSORS(CM_REQ_LOCAL_EECN)
CM_KUNIT_ACCESSORS(CM_REQ_INITIATOR_DEPTH)
CM_KUNIT_ACCESSORS(CM_REQ_REMOTE_EECN)
CM_KUNIT_ACCESSORS(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT)
CM_KUNIT_ACCESSORS(CM_REQ_TRANSPORT_SERVICE_TYPE)
CM_KUNIT_ACCESSORS(CM_REQ_END_TO_END_FLOW_CONTROL)
CM_KUNIT_ACCESSORS(CM_REQ_STARTING_PSN)
CM_KUNIT_ACCESSORS(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT)
CM_KUNIT_ACCESSORS(CM_REQ_RETRY_COUNT)
CM_KUNIT_ACCESSORS(CM_REQ_PARTITION_KEY)
CM_KUNIT_ACCESSORS(CM_REQ_PATH_PACKET_PAYLOAD_MTU)
CM_KUNIT_ACCESSORS(CM_REQ_RDC_EXISTS)
CM_KUNIT_ACCESSORS(CM_REQ_RNR_RETRY_COUNT)
CM_KUNIT_ACCESSORS(CM_REQ_MAX_CM_RETRIES)
CM_KUNIT_ACCESSORS(CM_REQ_SRQ)
CM_KUNIT_ACCESSORS(CM_REQ_EXTENDED_TRANSPORT_TYPE)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_LOCAL_PORT_LID)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_REMOTE_PORT_LID)
CM_KUNIT_BYTE_ACCESSOR(CM_REQ_PRIMARY_LOCAL_PORT_GID)
CM_KUNIT_BYTE_ACCESSOR(CM_REQ_PRIMARY_REMOTE_PORT_GID)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_FLOW_LABEL)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_PACKET_RATE)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_TRAFFIC_CLASS)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_HOP_LIMIT)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_SL)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_SUBNET_LOCAL)
CM_KUNIT_ACCESSORS(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_LOCAL_PORT_LID)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_REMOTE_PORT_LID)
CM_KUNIT_BYTE_ACCESSOR(CM_REQ_ALTERNATE_LOCAL_PORT_GID)
CM_KUNIT_BYTE_ACCESSOR(CM_REQ_ALTERNATE_REMOTE_PORT_GID)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_FLOW_LABEL)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_PACKET_RATE)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_TRAFFIC_CLASS)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_HOP_LIMIT)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_SL)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_SUBNET_LOCAL)
CM_KUNIT_ACCESSORS(CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT)
CM_KUNIT_ACCESSORS(CM_REQ_SAP_SUPPORTED)
CM_KUNIT_BYTE_ACCESSOR(CM_REQ_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_MRA_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_MRA_REMOTE_COMM_ID)
CM_KUNIT_ACCESSORS(CM_MRA_MESSAGE_MRAED)
CM_KUNIT_ACCESSORS(CM_MRA_SERVICE_TIMEOUT)
CM_KUNIT_BYTE_ACCESSOR(CM_MRA_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_REJ_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_REJ_REMOTE_COMM_ID)
CM_KUNIT_ACCESSORS(CM_REJ_MESSAGE_REJECTED)
CM_KUNIT_ACCESSORS(CM_REJ_REJECTED_INFO_LENGTH)
CM_KUNIT_ACCESSORS(CM_REJ_REASON)
CM_KUNIT_BYTE_ACCESSOR(CM_REJ_ARI)
CM_KUNIT_BYTE_ACCESSOR(CM_REJ_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_REP_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_REP_REMOTE_COMM_ID)
CM_KUNIT_ACCESSORS(CM_REP_LOCAL_Q_KEY)
CM_KUNIT_ACCESSORS(CM_REP_LOCAL_QPN)
CM_KUNIT_ACCESSORS(CM_REP_VENDOR_ID_H)
CM_KUNIT_ACCESSORS(CM_REP_LOCAL_EE_CONTEXT_NUMBER)
CM_KUNIT_ACCESSORS(CM_REP_VENDOR_ID_M)
CM_KUNIT_ACCESSORS(CM_REP_STARTING_PSN)
CM_KUNIT_ACCESSORS(CM_REP_VENDOR_ID_L)
CM_KUNIT_ACCESSORS(CM_REP_RESPONDER_RESOURCES)
CM_KUNIT_ACCESSORS(CM_REP_INITIATOR_DEPTH)
CM_KUNIT_ACCESSORS(CM_REP_TARGET_ACK_DELAY)
CM_KUNIT_ACCESSORS(CM_REP_FAILOVER_ACCEPTED)
CM_KUNIT_ACCESSORS(CM_REP_END_TO_END_FLOW_CONTROL)
CM_KUNIT_ACCESSORS(CM_REP_RNR_RETRY_COUNT)
CM_KUNIT_ACCESSORS(CM_REP_SRQ)
CM_KUNIT_ACCESSORS(CM_REP_LOCAL_CA_GUID)
CM_KUNIT_BYTE_ACCESSOR(CM_REP_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_RTU_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_RTU_REMOTE_COMM_ID)
CM_KUNIT_BYTE_ACCESSOR(CM_RTU_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_DREQ_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_DREQ_REMOTE_COMM_ID)
CM_KUNIT_ACCESSORS(CM_DREQ_REMOTE_QPN_EECN)
CM_KUNIT_BYTE_ACCESSOR(CM_DREQ_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_DREP_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_DREP_REMOTE_COMM_ID)
CM_KUNIT_BYTE_ACCESSOR(CM_DREP_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_SIDR_REQ_REQUESTID)
CM_KUNIT_ACCESSORS(CM_SIDR_REQ_PARTITION_KEY)
CM_KUNIT_ACCESSORS(CM_SIDR_REQ_SERVICEID)
CM_KUNIT_BYTE_ACCESSOR(CM_SIDR_REQ_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_REQUESTID)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_STATUS)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_VENDOR_ID_H)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_QPN)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_VENDOR_ID_L)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_SERVICEID)
CM_KUNIT_ACCESSORS(CM_SIDR_REP_Q_KEY)
CM_KUNIT_BYTE_ACCESSOR(CM_SIDR_REP_ADDITIONAL_INFORMATION)
CM_KUNIT_BYTE_ACCESSOR(CM_SIDR_REP_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_LAP_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_LAP_REMOTE_COMM_ID)
CM_KUNIT_ACCESSORS(CM_LAP_REMOTE_QPN_EECN)
CM_KUNIT_ACCESSORS(CM_LAP_REMOTE_CM_RESPONSE_TIMEOUT)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_LOCAL_PORT_LID)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_REMOTE_PORT_LID)
CM_KUNIT_BYTE_ACCESSOR(CM_LAP_ALTERNATE_LOCAL_PORT_GID)
CM_KUNIT_BYTE_ACCESSOR(CM_LAP_ALTERNATE_REMOTE_PORT_GID)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_FLOW_LABEL)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_TRAFFIC_CLASS)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_HOP_LIMIT)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_PACKET_RATE)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_SL)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_SUBNET_LOCAL)
CM_KUNIT_ACCESSORS(CM_LAP_ALTERNATE_LOCAL_ACK_TIMEOUT)
CM_KUNIT_BYTE_ACCESSOR(CM_LAP_PRIVATE_DATA)
CM_KUNIT_ACCESSORS(CM_APR_LOCAL_COMM_ID)
CM_KUNIT_ACCESSORS(CM_APR_REMOTE_COMM_ID)
CM_KUNIT_ACCESSORS(CM_APR_ADDITIONAL_INFORMATION_LENGTH)
CM_KUNIT_ACCESSORS(CM_APR_AR_STATUS)
CM_KUNIT_BYTE_ACCESSOR(CM_APR_ADDITIONAL_INFORMATION)
CM_KUNIT_BYTE_ACCESSOR(CM_APR_PRIVATE_DATA)

#define _CM_KUNIT_NUMBER_AT(msg_struct, byte_offset, mask, bits)	\
	.msg_size = sizeof(msg_struct), .offset = (byte_offset),	\
	.bit_mask = (mask), .word_bits = (bits)
#define _CM_KUNIT_BYTES_AT(msg_struct, byte_offset, type, bits)	\
	.msg_size = sizeof(msg_struct), .offset = (byte_offset),	\
	.word_bits = (bits),						\
	.gid = __builtin_types_compatible_p(type, union ib_gid)
#define CM_KUNIT_NUMBER(msg, f)						\
	{								\
		.name = #f, .attr = CM_##msg##_ATTR_ID,			\
		_CM_KUNIT_NUMBER_AT(f),					\
		.get = cm_kunit_##f##_get, .set = cm_kunit_##f##_set,	\
	}
#define CM_KUNIT_BYTES(msg, f)						\
	{								\
		.name = #f, .attr = CM_##msg##_ATTR_ID,			\
		_CM_KUNIT_BYTES_AT(f),					\
		.ptr = cm_kunit_##f##_ptr,				\
	}

static const struct cm_kunit_field cm_kunit_fields[] = {
	CM_KUNIT_NUMBER(REQ, CM_REQ_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_VENDOR_ID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_SERVICE_ID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_LOCAL_CA_GUID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_LOCAL_Q_KEY),
	CM_KUNIT_NUMBER(REQ, CM_REQ_LOCAL_QPN),
	CM_KUNIT_NUMBER(REQ, CM_REQ_RESPONDER_RESOURCES),
	CM_KUNIT_NUMBER(REQ, CM_REQ_LOCAL_EECN),
	CM_KUNIT_NUMBER(REQ, CM_REQ_INITIATOR_DEPTH),
	CM_KUNIT_NUMBER(REQ, CM_REQ_REMOTE_EECN),
	CM_KUNIT_NUMBER(REQ, CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_TRANSPORT_SERVICE_TYPE),
	CM_KUNIT_NUMBER(REQ, CM_REQ_END_TO_END_FLOW_CONTROL),
	CM_KUNIT_NUMBER(REQ, CM_REQ_STARTING_PSN),
	CM_KUNIT_NUMBER(REQ, CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_RETRY_COUNT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PARTITION_KEY),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PATH_PACKET_PAYLOAD_MTU),
	CM_KUNIT_NUMBER(REQ, CM_REQ_RDC_EXISTS),
	CM_KUNIT_NUMBER(REQ, CM_REQ_RNR_RETRY_COUNT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_MAX_CM_RETRIES),
	CM_KUNIT_NUMBER(REQ, CM_REQ_SRQ),
	CM_KUNIT_NUMBER(REQ, CM_REQ_EXTENDED_TRANSPORT_TYPE),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_LOCAL_PORT_LID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_REMOTE_PORT_LID),
	CM_KUNIT_BYTES(REQ, CM_REQ_PRIMARY_LOCAL_PORT_GID),
	CM_KUNIT_BYTES(REQ, CM_REQ_PRIMARY_REMOTE_PORT_GID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_FLOW_LABEL),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_PACKET_RATE),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_TRAFFIC_CLASS),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_HOP_LIMIT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_SL),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_SUBNET_LOCAL),
	CM_KUNIT_NUMBER(REQ, CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_LOCAL_PORT_LID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_REMOTE_PORT_LID),
	CM_KUNIT_BYTES(REQ, CM_REQ_ALTERNATE_LOCAL_PORT_GID),
	CM_KUNIT_BYTES(REQ, CM_REQ_ALTERNATE_REMOTE_PORT_GID),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_FLOW_LABEL),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_PACKET_RATE),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_TRAFFIC_CLASS),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_HOP_LIMIT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_SL),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_SUBNET_LOCAL),
	CM_KUNIT_NUMBER(REQ, CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT),
	CM_KUNIT_NUMBER(REQ, CM_REQ_SAP_SUPPORTED),
	CM_KUNIT_BYTES(REQ, CM_REQ_PRIVATE_DATA),

	CM_KUNIT_NUMBER(MRA, CM_MRA_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(MRA, CM_MRA_REMOTE_COMM_ID),
	CM_KUNIT_NUMBER(MRA, CM_MRA_MESSAGE_MRAED),
	CM_KUNIT_NUMBER(MRA, CM_MRA_SERVICE_TIMEOUT),
	CM_KUNIT_BYTES(MRA, CM_MRA_PRIVATE_DATA),

	CM_KUNIT_NUMBER(REJ, CM_REJ_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(REJ, CM_REJ_REMOTE_COMM_ID),
	CM_KUNIT_NUMBER(REJ, CM_REJ_MESSAGE_REJECTED),
	CM_KUNIT_NUMBER(REJ, CM_REJ_REJECTED_INFO_LENGTH),
	CM_KUNIT_NUMBER(REJ, CM_REJ_REASON),
	CM_KUNIT_BYTES(REJ, CM_REJ_ARI),
	CM_KUNIT_BYTES(REJ, CM_REJ_PRIVATE_DATA),

	CM_KUNIT_NUMBER(REP, CM_REP_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(REP, CM_REP_REMOTE_COMM_ID),
	CM_KUNIT_NUMBER(REP, CM_REP_LOCAL_Q_KEY),
	CM_KUNIT_NUMBER(REP, CM_REP_LOCAL_QPN),
	CM_KUNIT_NUMBER(REP, CM_REP_VENDOR_ID_H),
	CM_KUNIT_NUMBER(REP, CM_REP_LOCAL_EE_CONTEXT_NUMBER),
	CM_KUNIT_NUMBER(REP, CM_REP_VENDOR_ID_M),
	CM_KUNIT_NUMBER(REP, CM_REP_STARTING_PSN),
	CM_KUNIT_NUMBER(REP, CM_REP_VENDOR_ID_L),
	CM_KUNIT_NUMBER(REP, CM_REP_RESPONDER_RESOURCES),
	CM_KUNIT_NUMBER(REP, CM_REP_INITIATOR_DEPTH),
	CM_KUNIT_NUMBER(REP, CM_REP_TARGET_ACK_DELAY),
	CM_KUNIT_NUMBER(REP, CM_REP_FAILOVER_ACCEPTED),
	CM_KUNIT_NUMBER(REP, CM_REP_END_TO_END_FLOW_CONTROL),
	CM_KUNIT_NUMBER(REP, CM_REP_RNR_RETRY_COUNT),
	CM_KUNIT_NUMBER(REP, CM_REP_SRQ),
	CM_KUNIT_NUMBER(REP, CM_REP_LOCAL_CA_GUID),
	CM_KUNIT_BYTES(REP, CM_REP_PRIVATE_DATA),

	CM_KUNIT_NUMBER(RTU, CM_RTU_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(RTU, CM_RTU_REMOTE_COMM_ID),
	CM_KUNIT_BYTES(RTU, CM_RTU_PRIVATE_DATA),

	CM_KUNIT_NUMBER(DREQ, CM_DREQ_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(DREQ, CM_DREQ_REMOTE_COMM_ID),
	CM_KUNIT_NUMBER(DREQ, CM_DREQ_REMOTE_QPN_EECN),
	CM_KUNIT_BYTES(DREQ, CM_DREQ_PRIVATE_DATA),

	CM_KUNIT_NUMBER(DREP, CM_DREP_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(DREP, CM_DREP_REMOTE_COMM_ID),
	CM_KUNIT_BYTES(DREP, CM_DREP_PRIVATE_DATA),

	CM_KUNIT_NUMBER(SIDR_REQ, CM_SIDR_REQ_REQUESTID),
	CM_KUNIT_NUMBER(SIDR_REQ, CM_SIDR_REQ_PARTITION_KEY),
	CM_KUNIT_NUMBER(SIDR_REQ, CM_SIDR_REQ_SERVICEID),
	CM_KUNIT_BYTES(SIDR_REQ, CM_SIDR_REQ_PRIVATE_DATA),

	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_REQUESTID),
	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_STATUS),
	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH),
	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_VENDOR_ID_H),
	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_QPN),
	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_VENDOR_ID_L),
	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_SERVICEID),
	CM_KUNIT_NUMBER(SIDR_REP, CM_SIDR_REP_Q_KEY),
	CM_KUNIT_BYTES(SIDR_REP, CM_SIDR_REP_ADDITIONAL_INFORMATION),
	CM_KUNIT_BYTES(SIDR_REP, CM_SIDR_REP_PRIVATE_DATA),

	CM_KUNIT_NUMBER(LAP, CM_LAP_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(LAP, CM_LAP_REMOTE_COMM_ID),
	CM_KUNIT_NUMBER(LAP, CM_LAP_REMOTE_QPN_EECN),
	CM_KUNIT_NUMBER(LAP, CM_LAP_REMOTE_CM_RESPONSE_TIMEOUT),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_LOCAL_PORT_LID),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_REMOTE_PORT_LID),
	CM_KUNIT_BYTES(LAP, CM_LAP_ALTERNATE_LOCAL_PORT_GID),
	CM_KUNIT_BYTES(LAP, CM_LAP_ALTERNATE_REMOTE_PORT_GID),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_FLOW_LABEL),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_TRAFFIC_CLASS),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_HOP_LIMIT),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_PACKET_RATE),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_SL),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_SUBNET_LOCAL),
	CM_KUNIT_NUMBER(LAP, CM_LAP_ALTERNATE_LOCAL_ACK_TIMEOUT),
	CM_KUNIT_BYTES(LAP, CM_LAP_PRIVATE_DATA),

	CM_KUNIT_NUMBER(APR, CM_APR_LOCAL_COMM_ID),
	CM_KUNIT_NUMBER(APR, CM_APR_REMOTE_COMM_ID),
	CM_KUNIT_NUMBER(APR, CM_APR_ADDITIONAL_INFORMATION_LENGTH),
	CM_KUNIT_NUMBER(APR, CM_APR_AR_STATUS),
	CM_KUNIT_BYTES(APR, CM_APR_ADDITIONAL_INFORMATION),
	CM_KUNIT_BYTES(APR, CM_APR_PRIVATE_DATA),
};

/* The first bit of a field, counted from the start of the data. */
static unsigned int cm_kunit_pos(const struct cm_kunit_field *f)
{
	unsigned int word = (f->offset - IB_MGMT_MAD_HDR) * 8;

	if (f->ptr)
		return word;
	/* Bit 0 of the big-endian word is its least significant bit. */
	return word + f->word_bits - fls64(f->bit_mask);
}

static unsigned int cm_kunit_width(const struct cm_kunit_field *f)
{
	return f->ptr ? f->word_bits : hweight64(f->bit_mask);
}

static void cm_kunit_field_desc(const struct cm_kunit_field *f, char *desc)
{
	strscpy(desc, f->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_field, cm_kunit_fields, cm_kunit_field_desc);

static const struct cm_kunit_field *cm_kunit_field_named(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cm_kunit_fields); i++)
		if (!strcmp(cm_kunit_fields[i].name, name))
			return &cm_kunit_fields[i];
	return NULL;
}

/* The field's bits, worked out bit by bit rather than by the accessors. */
static void cm_kunit_field_mask(const struct cm_kunit_field *f, u8 *mask)
{
	unsigned int i;

	memset(mask, 0, CM_DATA_BYTES);
	for (i = cm_kunit_pos(f); i < cm_kunit_pos(f) + cm_kunit_width(f); i++)
		mask[i / 8] |= 0x80 >> (i % 8);
}

static u64 cm_kunit_width_max(unsigned int width)
{
	return width >= 64 ? U64_MAX : GENMASK_ULL(width - 1, 0);
}

/* Neither all zeros nor all ones (for fields wider than one bit). */
static u64 cm_kunit_width_mixed(unsigned int width)
{
	return 0x9c3a5e7f1b6d4c21ULL & cm_kunit_width_max(width);
}

static void cm_kunit_fill(struct ib_mad *mad, unsigned int seed)
{
	unsigned int i;

	for (i = 0; i < CM_DATA_BYTES; i++)
		mad->data[i] = (u8)(i * 37 + seed) ^ 0xa5;
}

static void field_lies_inside_the_data_area(struct kunit *test)
{
	const struct cm_kunit_field *f = test->param_value;

	KUNIT_EXPECT_GT(test, cm_kunit_width(f), 0U);
	KUNIT_EXPECT_LE(test, cm_kunit_pos(f) + cm_kunit_width(f), CM_DATA_BYTES * 8);
	/* Byte fields are whole, aligned bytes; numbers have accessors. */
	if (f->ptr) {
		KUNIT_EXPECT_EQ(test, cm_kunit_pos(f) % 8, 0U);
		KUNIT_EXPECT_EQ(test, cm_kunit_width(f) % 8, 0U);
		KUNIT_EXPECT_TRUE(test, !f->gid || cm_kunit_width(f) == 128);
	} else {
		KUNIT_EXPECT_LE(test, cm_kunit_width(f), 64U);
		KUNIT_EXPECT_NOT_NULL(test, f->get);
	}
}

static void field_round_trips_min_max_and_mixed(struct kunit *test)
{
	const struct cm_kunit_field *f = test->param_value;
	u64 vals[3] = { 0, cm_kunit_width_max(cm_kunit_width(f)),
			cm_kunit_width_mixed(cm_kunit_width(f)) };
	struct ib_mad *mad;
	u8 *bytes;
	unsigned int i;

	mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	bytes = kunit_kzalloc(test, CM_DATA_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	KUNIT_ASSERT_NOT_NULL(test, bytes);
	if (f->ptr) {
		size_t len = cm_kunit_width(f) / 8;

		/* Byte strings: zeros, ones and a pattern, in and out. */
		for (i = 0; i < 3; i++) {
			if (i < 2)
				memset(bytes, i ? 0xff : 0, len);
			else
				get_random_bytes(bytes, len);
			cm_kunit_fill(mad, i);
			memcpy(f->ptr(mad), bytes, len);
			KUNIT_EXPECT_MEMEQ(test, mad->data + cm_kunit_pos(f) / 8, bytes,
					   len);
		}
		return;
	}
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		cm_kunit_fill(mad, i);
		f->set(mad, vals[i]);
		KUNIT_EXPECT_EQ_MSG(test, f->get(mad), vals[i], "value %u", i);
	}
	/* Bits beyond the width are dropped, not spilled. */
	if (cm_kunit_width(f) < 64) {
		f->set(mad, U64_MAX << cm_kunit_width(f));
		KUNIT_EXPECT_EQ(test, f->get(mad), 0ULL);
	}
}

/* Write the field (through the accessors or its pointer) to @val. */
static void cm_kunit_write(struct ib_mad *mad, const struct cm_kunit_field *f,
			   u64 val, u8 byte)
{
	if (f->ptr)
		memset(f->ptr(mad), byte, cm_kunit_width(f) / 8);
	else
		f->set(mad, val);
}

static void field_write_leaves_other_bits_alone(struct kunit *test)
{
	const struct cm_kunit_field *f = test->param_value;
	struct ib_mad *mad, *before;
	u8 *mask;
	unsigned int i, round;

	mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	mask = kunit_kzalloc(test, CM_DATA_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, mask);
	cm_kunit_field_mask(f, mask);

	for (round = 0; round < 4; round++) {
		if (round < 2)
			cm_kunit_fill(mad, round);
		else
			memset(mad->data, round == 2 ? 0 : 0xff, CM_DATA_BYTES);
		memcpy(before, mad, sizeof(*mad));
		cm_kunit_write(mad, f,
			       round & 1 ? 0 : cm_kunit_width_max(cm_kunit_width(f)),
			       round & 1 ? 0 : 0xff);
		KUNIT_EXPECT_MEMEQ(test, &mad->mad_hdr, &before->mad_hdr,
				   sizeof(mad->mad_hdr));
		for (i = 0; i < CM_DATA_BYTES; i++) {
			u8 changed = mad->data[i] ^ before->data[i];
			u8 want = round & 1 ? 0 : mask[i];

			KUNIT_EXPECT_EQ_MSG(test, changed & ~mask[i], 0,
					    "round %u byte %u", round, i);
			KUNIT_EXPECT_EQ_MSG(test, mad->data[i] & mask[i], want,
					    "round %u byte %u", round, i);
		}
	}
}

static void field_reads_back_among_set_bits(struct kunit *test)
{
	const struct cm_kunit_field *f = test->param_value;
	u64 val = cm_kunit_width_mixed(cm_kunit_width(f));
	struct ib_mad *mad;
	u8 *mask;
	unsigned int i;

	mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	mask = kunit_kzalloc(test, CM_DATA_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	KUNIT_ASSERT_NOT_NULL(test, mask);
	cm_kunit_field_mask(f, mask);

	if (f->ptr) {
		u8 *p = f->ptr(mad);

		/* The address agrees with the bit description. */
		KUNIT_EXPECT_PTR_EQ(test, (void *)p,
				    (void *)(mad->data + cm_kunit_pos(f) / 8));
		memset(mad->data, 0, CM_DATA_BYTES);
		memset(p, 0xff, cm_kunit_width(f) / 8);
		KUNIT_EXPECT_MEMEQ(test, mad->data, mask, CM_DATA_BYTES);
		return;
	}
	/* Every other bit set: the field still reads back alone. */
	for (i = 0; i < CM_DATA_BYTES; i++)
		mad->data[i] = ~mask[i];
	KUNIT_EXPECT_EQ(test, f->get(mad), 0ULL);
	f->set(mad, val);
	KUNIT_EXPECT_EQ(test, f->get(mad), val);
	/* All bits set: the field reads as all ones of its width. */
	memset(mad->data, 0xff, CM_DATA_BYTES);
	KUNIT_EXPECT_EQ(test, f->get(mad), cm_kunit_width_max(cm_kunit_width(f)));
	/* Only the field's bits set: exactly its mask. */
	memset(mad->data, 0, CM_DATA_BYTES);
	f->set(mad, cm_kunit_width_max(cm_kunit_width(f)));
	KUNIT_EXPECT_MEMEQ(test, mad->data, mask, CM_DATA_BYTES);
}

/* No two fields of one message share a bit. */
static void message_fields_do_not_overlap(struct kunit *test)
{
	u8 *seen, *mask;
	unsigned int a, i, j;

	seen = kunit_kzalloc(test, CM_DATA_BYTES, GFP_KERNEL);
	mask = kunit_kzalloc(test, CM_DATA_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_ASSERT_NOT_NULL(test, mask);
	for (a = 0; a < ARRAY_SIZE(cm_kunit_attrs); a++) {
		__be16 attr = cm_kunit_attrs[a];
		unsigned int nfields = 0;

		memset(seen, 0, CM_DATA_BYTES);
		for (i = 0; i < ARRAY_SIZE(cm_kunit_fields); i++) {
			const struct cm_kunit_field *f = &cm_kunit_fields[i];

			if (f->attr != attr)
				continue;
			nfields++;
			cm_kunit_field_mask(f, mask);
			for (j = 0; j < CM_DATA_BYTES; j++) {
				KUNIT_EXPECT_EQ_MSG(test, seen[j] & mask[j], 0,
						    "%s overlaps at byte %u",
						    f->name, j);
				seen[j] |= mask[j];
			}
		}
		KUNIT_EXPECT_GT_MSG(test, nfields, 2U, "attribute 0x%x",
				    be16_to_cpu(attr));
		/* Every message ends with its private data at byte 232. */
		KUNIT_EXPECT_EQ_MSG(test, seen[CM_DATA_BYTES - 1], 0xff,
				    "attribute 0x%x", be16_to_cpu(attr));
	}
}

/* The size of a byte field, in bytes, or 0 if there is none so named. */
static size_t cm_kunit_bytes(const char *name)
{
	const struct cm_kunit_field *f = cm_kunit_field_named(name);

	return f && f->ptr ? cm_kunit_width(f) / 8 : 0;
}

/* The maximum private data sizes of ib_cm.h are the wire's. */
static void private_data_sizes_match_the_api(struct kunit *test)
{
	static const struct {
		const char *field;
		size_t size;
	} sizes[] = {
		{ "CM_REQ_PRIVATE_DATA", IB_CM_REQ_PRIVATE_DATA_SIZE },
		{ "CM_MRA_PRIVATE_DATA", IB_CM_MRA_PRIVATE_DATA_SIZE },
		{ "CM_REJ_PRIVATE_DATA", IB_CM_REJ_PRIVATE_DATA_SIZE },
		{ "CM_REJ_ARI", IB_CM_REJ_ARI_LENGTH },
		{ "CM_REP_PRIVATE_DATA", IB_CM_REP_PRIVATE_DATA_SIZE },
		{ "CM_RTU_PRIVATE_DATA", IB_CM_RTU_PRIVATE_DATA_SIZE },
		{ "CM_DREQ_PRIVATE_DATA", IB_CM_DREQ_PRIVATE_DATA_SIZE },
		{ "CM_DREP_PRIVATE_DATA", IB_CM_DREP_PRIVATE_DATA_SIZE },
		{ "CM_SIDR_REQ_PRIVATE_DATA", IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE },
		{ "CM_SIDR_REP_PRIVATE_DATA", IB_CM_SIDR_REP_PRIVATE_DATA_SIZE },
		{ "CM_SIDR_REP_ADDITIONAL_INFORMATION",
		  IB_CM_SIDR_REP_INFO_LENGTH },
		{ "CM_LAP_PRIVATE_DATA", IB_CM_LAP_PRIVATE_DATA_SIZE },
		{ "CM_APR_PRIVATE_DATA", IB_CM_APR_PRIVATE_DATA_SIZE },
		{ "CM_APR_ADDITIONAL_INFORMATION", IB_CM_APR_INFO_LENGTH },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		KUNIT_EXPECT_EQ_MSG(test, cm_kunit_bytes(sizes[i].field),
				    sizes[i].size, "%s", sizes[i].field);
}

/*
 * Whole messages, worked out by hand from the IBTA tables (Vol 1, 12.6.5
 * REQ, 12.6.8 REP, 12.6.10 SIDR_REP).  Every field gets a distinct value
 * whose bytes count up through the message where the field is byte
 * aligned; the bit fields sharing a byte are:
 *
 * REQ byte 43: RemoteCMResponseTimeout 10101, TransportServiceType 10,
 *   EndToEndFlowControl 1 -> 0xad.  Byte 47: LocalCMResponseTimeout
 *   01010, RetryCount 011 -> 0x53.  Byte 50: PathMTU 0101, RDCExists 1,
 *   RNRRetryCount 010 -> 0x5a.  Byte 51: MaxCMRetries 1100, SRQ 0,
 *   ExtendedTransportType 111 -> 0xc7.  Bytes 88-91: PrimaryFlowLabel
 *   0x5a5b5, 4 reserved bits, 2 reserved bits, PrimaryPacketRate 101101
 *   -> 5a 5b 50 2d.  Byte 94: PrimarySL 1001, SubnetLocal 1, reserved ->
 *   0x98.  Byte 95: PrimaryLocalACKTimeout 11111, reserved -> 0xf8.
 *   Bytes 132-135: AlternateFlowLabel 0x84858, AlternatePacketRate 000111
 *   -> 84 85 80 07.  Byte 138: AlternateSL 0011, SubnetLocal 0 -> 0x30.
 *   Byte 139: AlternateLocalACKTimeout 10001, SAPSupported 1 -> 0x8c.
 * REP byte 26: TargetACKDelay 11011, FailoverAccepted 01,
 *   EndToEndFlowControl 1 -> 0xdb.  Byte 27: RNRRetryCount 101, SRQ 1,
 *   reserved -> 0xb0.
 * Reserved bytes (REQ 4, 24-27) stay zero.  Private data byte k is k;
 * SIDR_REP additional information byte k is 0x80 + k.
 */
static const u8 cm_kunit_req_bytes[CM_DATA_BYTES] = {
	/*   0 */ 0x01, 0x02, 0x03, 0x04, 0x00, 0x05, 0x06, 0x07,
	/*   8 */ 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	/*  16 */ 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	/*  24 */ 0x00, 0x00, 0x00, 0x00, 0x1c, 0x1d, 0x1e, 0x1f,
	/*  32 */ 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	/*  40 */ 0x28, 0x29, 0x2a, 0xad, 0x2c, 0x2d, 0x2e, 0x53,
	/*  48 */ 0x30, 0x31, 0x5a, 0xc7, 0x34, 0x35, 0x36, 0x37,
	/*  56 */ 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f,
	/*  64 */ 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
	/*  72 */ 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
	/*  80 */ 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57,
	/*  88 */ 0x5a, 0x5b, 0x50, 0x2d, 0x5c, 0x5d, 0x98, 0xf8,
	/*  96 */ 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
	/* 104 */ 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
	/* 112 */ 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
	/* 120 */ 0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f,
	/* 128 */ 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x80, 0x07,
	/* 136 */ 0x88, 0x89, 0x30, 0x8c, 0x00, 0x01, 0x02, 0x03,
	/* 144 */ 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
	/* 152 */ 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
	/* 160 */ 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
	/* 168 */ 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
	/* 176 */ 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b,
	/* 184 */ 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33,
	/* 192 */ 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x3b,
	/* 200 */ 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x41, 0x42, 0x43,
	/* 208 */ 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b,
	/* 216 */ 0x4c, 0x4d, 0x4e, 0x4f, 0x50, 0x51, 0x52, 0x53,
	/* 224 */ 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x5b,
};

static const u8 cm_kunit_rep_bytes[CM_DATA_BYTES] = {
	/*   0 */ 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	/*   8 */ 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
	/*  16 */ 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	/*  24 */ 0x19, 0x1a, 0xdb, 0xb0, 0x1c, 0x1d, 0x1e, 0x1f,
	/*  32 */ 0x20, 0x21, 0x22, 0x23, 0x00, 0x01, 0x02, 0x03,
	/*  40 */ 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
	/*  48 */ 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
	/*  56 */ 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
	/*  64 */ 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
	/*  72 */ 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b,
	/*  80 */ 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33,
	/*  88 */ 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x3b,
	/*  96 */ 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x41, 0x42, 0x43,
	/* 104 */ 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b,
	/* 112 */ 0x4c, 0x4d, 0x4e, 0x4f, 0x50, 0x51, 0x52, 0x53,
	/* 120 */ 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x5b,
	/* 128 */ 0x5c, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63,
	/* 136 */ 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b,
	/* 144 */ 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73,
	/* 152 */ 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x7b,
	/* 160 */ 0x7c, 0x7d, 0x7e, 0x7f, 0x80, 0x81, 0x82, 0x83,
	/* 168 */ 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b,
	/* 176 */ 0x8c, 0x8d, 0x8e, 0x8f, 0x90, 0x91, 0x92, 0x93,
	/* 184 */ 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0x9b,
	/* 192 */ 0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa1, 0xa2, 0xa3,
	/* 200 */ 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab,
	/* 208 */ 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3,
	/* 216 */ 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb,
	/* 224 */ 0xbc, 0xbd, 0xbe, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3,
};

static const u8 cm_kunit_sidr_rep_bytes[CM_DATA_BYTES] = {
	/*   0 */ 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	/*   8 */ 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
	/*  16 */ 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	/*  24 */ 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
	/*  32 */ 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
	/*  40 */ 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
	/*  48 */ 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
	/*  56 */ 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
	/*  64 */ 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
	/*  72 */ 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
	/*  80 */ 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
	/*  88 */ 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
	/*  96 */ 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	/* 104 */ 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	/* 112 */ 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	/* 120 */ 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	/* 128 */ 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	/* 136 */ 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f,
	/* 144 */ 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
	/* 152 */ 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f,
	/* 160 */ 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
	/* 168 */ 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
	/* 176 */ 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57,
	/* 184 */ 0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f,
	/* 192 */ 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
	/* 200 */ 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
	/* 208 */ 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
	/* 216 */ 0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f,
	/* 224 */ 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
};

/* The attribute data of a message, after its common MAD header. */
static const u8 *cm_kunit_attr_data(const void *msg)
{
	return (const u8 *)msg + IB_MGMT_MAD_HDR;
}

static void cm_kunit_count_up(void *p, size_t len, u8 first)
{
	u8 *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = first + i;
}

static void req_encodes_as_the_ibta_table(struct kunit *test)
{
	struct cm_req_msg *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, req);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, 0x01020304);
	IBA_SET(CM_REQ_VENDOR_ID, req, 0x050607);
	IBA_SET(CM_REQ_SERVICE_ID, req, 0x08090a0b0c0d0e0fULL);
	IBA_SET(CM_REQ_LOCAL_CA_GUID, req, 0x1011121314151617ULL);
	IBA_SET(CM_REQ_LOCAL_Q_KEY, req, 0x1c1d1e1f);
	IBA_SET(CM_REQ_LOCAL_QPN, req, 0x202122);
	IBA_SET(CM_REQ_RESPONDER_RESOURCES, req, 0x23);
	IBA_SET(CM_REQ_LOCAL_EECN, req, 0x242526);
	IBA_SET(CM_REQ_INITIATOR_DEPTH, req, 0x27);
	IBA_SET(CM_REQ_REMOTE_EECN, req, 0x28292a);
	IBA_SET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req, 0x15);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, 2);
	IBA_SET(CM_REQ_END_TO_END_FLOW_CONTROL, req, 1);
	IBA_SET(CM_REQ_STARTING_PSN, req, 0x2c2d2e);
	IBA_SET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, req, 0x0a);
	IBA_SET(CM_REQ_RETRY_COUNT, req, 3);
	IBA_SET(CM_REQ_PARTITION_KEY, req, 0x3031);
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, 5);
	IBA_SET(CM_REQ_RDC_EXISTS, req, 1);
	IBA_SET(CM_REQ_RNR_RETRY_COUNT, req, 2);
	IBA_SET(CM_REQ_MAX_CM_RETRIES, req, 0xc);
	IBA_SET(CM_REQ_SRQ, req, 0);
	IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, req, 7);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_PORT_LID, req, 0x3435);
	IBA_SET(CM_REQ_PRIMARY_REMOTE_PORT_LID, req, 0x3637);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, req),
			  sizeof(union ib_gid), 0x38);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req),
			  sizeof(union ib_gid), 0x48);
	IBA_SET(CM_REQ_PRIMARY_FLOW_LABEL, req, 0x5a5b5);
	IBA_SET(CM_REQ_PRIMARY_PACKET_RATE, req, 0x2d);
	IBA_SET(CM_REQ_PRIMARY_TRAFFIC_CLASS, req, 0x5c);
	IBA_SET(CM_REQ_PRIMARY_HOP_LIMIT, req, 0x5d);
	IBA_SET(CM_REQ_PRIMARY_SL, req, 9);
	IBA_SET(CM_REQ_PRIMARY_SUBNET_LOCAL, req, 1);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, req, 0x1f);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req, 0x6061);
	IBA_SET(CM_REQ_ALTERNATE_REMOTE_PORT_LID, req, 0x6263);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID, req),
			  sizeof(union ib_gid), 0x64);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_REMOTE_PORT_GID, req),
			  sizeof(union ib_gid), 0x74);
	IBA_SET(CM_REQ_ALTERNATE_FLOW_LABEL, req, 0x84858);
	IBA_SET(CM_REQ_ALTERNATE_PACKET_RATE, req, 0x07);
	IBA_SET(CM_REQ_ALTERNATE_TRAFFIC_CLASS, req, 0x88);
	IBA_SET(CM_REQ_ALTERNATE_HOP_LIMIT, req, 0x89);
	IBA_SET(CM_REQ_ALTERNATE_SL, req, 3);
	IBA_SET(CM_REQ_ALTERNATE_SUBNET_LOCAL, req, 0);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, req, 0x11);
	IBA_SET(CM_REQ_SAP_SUPPORTED, req, 1);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, req),
			  IB_CM_REQ_PRIVATE_DATA_SIZE, 0);

	KUNIT_EXPECT_MEMEQ(test, cm_kunit_attr_data(req), cm_kunit_req_bytes,
			   CM_DATA_BYTES);
}

static void rep_encodes_as_the_ibta_table(struct kunit *test)
{
	struct cm_rep_msg *rep = kunit_kzalloc(test, sizeof(*rep), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rep);
	IBA_SET(CM_REP_LOCAL_COMM_ID, rep, 0x01020304);
	IBA_SET(CM_REP_REMOTE_COMM_ID, rep, 0x05060708);
	IBA_SET(CM_REP_LOCAL_Q_KEY, rep, 0x090a0b0c);
	IBA_SET(CM_REP_LOCAL_QPN, rep, 0x0d0e0f);
	IBA_SET(CM_REP_VENDOR_ID_H, rep, 0x10);
	IBA_SET(CM_REP_LOCAL_EE_CONTEXT_NUMBER, rep, 0x111213);
	IBA_SET(CM_REP_VENDOR_ID_M, rep, 0x14);
	IBA_SET(CM_REP_STARTING_PSN, rep, 0x151617);
	IBA_SET(CM_REP_VENDOR_ID_L, rep, 0x18);
	IBA_SET(CM_REP_RESPONDER_RESOURCES, rep, 0x19);
	IBA_SET(CM_REP_INITIATOR_DEPTH, rep, 0x1a);
	IBA_SET(CM_REP_TARGET_ACK_DELAY, rep, 0x1b);
	IBA_SET(CM_REP_FAILOVER_ACCEPTED, rep, 1);
	IBA_SET(CM_REP_END_TO_END_FLOW_CONTROL, rep, 1);
	IBA_SET(CM_REP_RNR_RETRY_COUNT, rep, 5);
	IBA_SET(CM_REP_SRQ, rep, 1);
	IBA_SET(CM_REP_LOCAL_CA_GUID, rep, 0x1c1d1e1f20212223ULL);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_REP_PRIVATE_DATA, rep),
			  IB_CM_REP_PRIVATE_DATA_SIZE, 0);

	KUNIT_EXPECT_MEMEQ(test, cm_kunit_attr_data(rep), cm_kunit_rep_bytes,
			   CM_DATA_BYTES);
}

static void sidr_rep_encodes_as_the_ibta_table(struct kunit *test)
{
	struct cm_sidr_rep_msg *rep = kunit_kzalloc(test, sizeof(*rep), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rep);
	IBA_SET(CM_SIDR_REP_REQUESTID, rep, 0x01020304);
	IBA_SET(CM_SIDR_REP_STATUS, rep, 0x05);
	IBA_SET(CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH, rep, 0x06);
	IBA_SET(CM_SIDR_REP_VENDOR_ID_H, rep, 0x0708);
	IBA_SET(CM_SIDR_REP_QPN, rep, 0x090a0b);
	IBA_SET(CM_SIDR_REP_VENDOR_ID_L, rep, 0x0c);
	IBA_SET(CM_SIDR_REP_SERVICEID, rep, 0x0d0e0f1011121314ULL);
	IBA_SET(CM_SIDR_REP_Q_KEY, rep, 0x15161718);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_SIDR_REP_ADDITIONAL_INFORMATION, rep),
			  IB_CM_SIDR_REP_INFO_LENGTH, 0x80);
	cm_kunit_count_up(IBA_GET_MEM_PTR(CM_SIDR_REP_PRIVATE_DATA, rep),
			  IB_CM_SIDR_REP_PRIVATE_DATA_SIZE, 0);

	KUNIT_EXPECT_MEMEQ(test, cm_kunit_attr_data(rep), cm_kunit_sidr_rep_bytes,
			   CM_DATA_BYTES);
}

/* Decoding the hand-worked REQ gives back the values that made it. */
static void req_decodes_from_the_ibta_table(struct kunit *test)
{
	struct cm_req_msg *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, req);
	memcpy((u8 *)req + IB_MGMT_MAD_HDR, cm_kunit_req_bytes, CM_DATA_BYTES);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req),
			0x15ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_TRANSPORT_SERVICE_TYPE, req), 2ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_END_TO_END_FLOW_CONTROL, req), 1ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_RETRY_COUNT, req), 3ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req), 5ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_RNR_RETRY_COUNT, req), 2ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_EXTENDED_TRANSPORT_TYPE, req), 7ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_PRIMARY_FLOW_LABEL, req), 0x5a5b5ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_PRIMARY_PACKET_RATE, req), 0x2dULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_PRIMARY_SL, req), 9ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_ALTERNATE_FLOW_LABEL, req), 0x84858ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, req),
			0x11ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_SAP_SUPPORTED, req), 1ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_SERVICE_ID, req),
			0x08090a0b0c0d0e0fULL);
	KUNIT_EXPECT_TRUE(test, cm_req_has_alt_path(req));
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_MAX);
}

static struct kunit_case cm_kunit_wire_cases[] = {
	KUNIT_CASE_PARAM(field_lies_inside_the_data_area,
			 cm_kunit_field_gen_params),
	KUNIT_CASE_PARAM(field_round_trips_min_max_and_mixed,
			 cm_kunit_field_gen_params),
	KUNIT_CASE_PARAM(field_write_leaves_other_bits_alone,
			 cm_kunit_field_gen_params),
	KUNIT_CASE_PARAM(field_reads_back_among_set_bits,
			 cm_kunit_field_gen_params),
	KUNIT_CASE(message_fields_do_not_overlap),
	KUNIT_CASE(private_data_sizes_match_the_api),
	KUNIT_CASE(req_encodes_as_the_ibta_table),
	KUNIT_CASE(rep_encodes_as_the_ibta_table),
	KUNIT_CASE(sidr_rep_encodes_as_the_ibta_table),
	KUNIT_CASE(req_decodes_from_the_ibta_table),
	{}
};

static struct kunit_suite cm_kunit_wire_suite = {
	.name = "ib_cm_wire",
	.test_cases = cm_kunit_wire_cases,
};

kunit_test_suite(cm_kunit_wire_suite);

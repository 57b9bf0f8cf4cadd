// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for ib_cm.
 *
 * This file is compiled as part of cm.c (see the end of that file) when
 * CONFIG_INFINIBAND_CM_KUNIT_TEST is set, so the suites reach cm.c's
 * static functions and data directly; tools/testing/kunit/run.sh builds a
 * kernel with the series of make patch applied.  The suites in
 * this file need no RDMA device or MAD transport: ids are created on a
 * zeroed struct ib_device that only serves as a key, and ids whose state a
 * test set by hand are put back to IDLE, without ports, before they are
 * destroyed, so that the destroy path never tries to send.  The protocol
 * suites in cm_kunit_proto.c (included below) run the real state machine
 * over a fake MAD transport instead.
 *
 * Suites, one per concern:
 *   ib_cm_wire         field descriptions and accessors of cm_msgs.h
 *   ib_cm_arithmetic   timeouts and reject reason texts
 *   ib_cm_listen       the listen table
 *   ib_cm_state_machine the transition tables and cm_change_state()
 *   ib_cm_api_misuse   API calls in the wrong state or with bad arguments
 *   ib_cm_qp_attr      QP attributes for INIT, RTR and RTS
 *   ib_cm_hostile      received MADs the CM must drop or classify
 *   ib_cm_active, ib_cm_passive, ib_cm_sidr_lap, ib_cm_duplicates,
 *   ib_cm_contract, ib_cm_states, ib_cm_floods, ib_cm_ordering,
 *   ib_cm_alloc_faults (cm_kunit_proto.c)
 *
 * Under debug.kunitconfig the harness scans for leaks after the suites
 * (kmemleak-init.sh).
 */

#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/random.h>

/* ---------------------------------------------------------------------
 * Wire codec
 *
 * The fields are those of <rdma/ibta_vol1_c12.h>, read and written through
 * the accessors of <rdma/iba.h>.  Each test below works out where a field
 * lies from its description alone and checks the accessors against that,
 * bit by bit.
 */

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

/* ---------------------------------------------------------------------
 * Arithmetic: timeouts and reject reasons
 */

struct cm_kunit_ms_case {
	unsigned int t;
	int ms;
};

static const struct cm_kunit_ms_case cm_kunit_ms_cases[] = {
	{ 0, 1 }, { 1, 1 }, { 7, 1 }, { 8, 1 }, { 9, 2 }, { 10, 4 },
	{ 14, 64 }, { 16, 256 }, { 20, 4096 }, { 24, 65536 },
	{ 30, 1 << 22 }, { 31, 1 << 23 },
};

static void cm_kunit_ms_desc(const struct cm_kunit_ms_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "t=%u is %d ms", c->t, c->ms);
}

KUNIT_ARRAY_PARAM(cm_kunit_ms, cm_kunit_ms_cases, cm_kunit_ms_desc);

static void iba_time_is_two_to_the_t_minus_8_ms(struct kunit *test)
{
	const struct cm_kunit_ms_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, cm_iba_to_ms(c->t), c->ms);
}

struct cm_kunit_ack_case {
	u8 ca_ack_delay;
	u8 packet_life_time;
	u8 timeout;
};

/*
 * 2^(plt + 1) + 2^delay, as a power of two: one more than the larger
 * exponent when the two are within one of each other, else the larger;
 * never beyond 31.
 */
static const struct cm_kunit_ack_case cm_kunit_ack_cases[] = {
	{ 0, 0, 2 },		/* 2^1 + 2^0: exponents adjacent */
	{ 1, 0, 2 },		/* 2^1 + 2^1 = 2^2 */
	{ 3, 1, 4 },		/* 2^2 + 2^3 */
	{ 10, 14, 15 },		/* the round trip dominates */
	{ 14, 14, 16 },
	{ 15, 14, 16 },		/* equal exponents double */
	{ 16, 14, 17 },
	{ 17, 14, 17 },		/* the ACK delay dominates */
	{ 20, 5, 20 },
	{ 16, 0, 16 },
	{ 0, 30, 31 },
	{ 31, 0, 31 },
	{ 31, 31, 31 },		/* capped at the 5-bit maximum */
	{ 30, 30, 31 },
};

static void cm_kunit_ack_desc(const struct cm_kunit_ack_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "ack delay %u, lifetime %u -> %u",
		 c->ca_ack_delay, c->packet_life_time, c->timeout);
}

KUNIT_ARRAY_PARAM(cm_kunit_ack, cm_kunit_ack_cases, cm_kunit_ack_desc);

static void ack_timeout_covers_round_trip_and_ack_delay(struct kunit *test)
{
	const struct cm_kunit_ack_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, cm_ack_timeout(c->ca_ack_delay,
					     c->packet_life_time), c->timeout);
}

/* Over the whole 5-bit domain: at least each term, at most 31. */
static void ack_timeout_bounds_hold_everywhere(struct kunit *test)
{
	unsigned int d, p;

	for (d = 0; d < 32; d++) {
		for (p = 0; p < 32; p++) {
			u8 t = cm_ack_timeout(d, p);

			KUNIT_EXPECT_LE(test, t, 31);
			KUNIT_EXPECT_GE(test, t, min(d, 31U));
			KUNIT_EXPECT_GE(test, t, min(p + 1, 31U));
		}
	}
}

struct cm_kunit_rej_case {
	int reason;
	const char *text;	/* NULL: any text but "unrecognized reason" */
};

/*
 * ibcm_reject_msg() says exactly what the stock CM says: consumers print
 * its texts and scripts grep logs for them.  The KUnit harness writes the
 * stock texts into cm_kunit_stock_rej.h, read out of the stock cm.c
 * (tools/testing/kunit/stock_rej.py); in a tree without that file only
 * the fallback is checked.
 */
#if __has_include("cm_kunit_stock_rej.h")
#include "cm_kunit_stock_rej.h"
#else
#define CM_KUNIT_STOCK_REJ_TEXTS
#define CM_KUNIT_STOCK_REJ_DEFAULT "unrecognized reason"
#endif

static const struct cm_kunit_rej_case cm_kunit_rej_cases[] = {
	CM_KUNIT_STOCK_REJ_TEXTS
	{ 34, CM_KUNIT_STOCK_REJ_DEFAULT },
	{ 0, CM_KUNIT_STOCK_REJ_DEFAULT },
	{ 36, CM_KUNIT_STOCK_REJ_DEFAULT },
	{ -1, CM_KUNIT_STOCK_REJ_DEFAULT },
	{ 1000, CM_KUNIT_STOCK_REJ_DEFAULT },
	{ INT_MIN, CM_KUNIT_STOCK_REJ_DEFAULT },
	{ INT_MAX, CM_KUNIT_STOCK_REJ_DEFAULT },
};

/* The stock texts were there to compare with, all 34 of them. */
static void stock_reject_texts_were_compared(struct kunit *test)
{
#ifdef CM_KUNIT_HAVE_STOCK_REJ
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(cm_kunit_rej_cases), 34 + 7);
#else
	kunit_skip(test, "no cm_kunit_stock_rej.h (the project's KUnit harness writes it)");
#endif
}

static void cm_kunit_rej_desc(const struct cm_kunit_rej_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "reason %d", c->reason);
}

KUNIT_ARRAY_PARAM(cm_kunit_rej, cm_kunit_rej_cases, cm_kunit_rej_desc);

static void reject_reason_has_its_text(struct kunit *test)
{
	const struct cm_kunit_rej_case *c = test->param_value;

	KUNIT_EXPECT_STREQ(test, ibcm_reject_msg(c->reason), c->text);
}

/* Every defined reason, 1..35 except 34, has a text of its own. */
static void every_known_reason_has_distinct_text(struct kunit *test)
{
	const char *seen[36] = {};
	int r, q;

	for (r = 1; r <= 35; r++) {
		if (r == 34)
			continue;
		seen[r] = ibcm_reject_msg(r);
		KUNIT_EXPECT_NOT_NULL(test, seen[r]);
		KUNIT_EXPECT_STRNEQ_MSG(test, seen[r], "unrecognized reason",
					"reason %d", r);
		for (q = 1; q < r; q++)
			if (seen[q])
				KUNIT_EXPECT_STRNEQ(test, seen[q], seen[r]);
	}
}

static struct kunit_case cm_kunit_arith_cases[] = {
	KUNIT_CASE_PARAM(iba_time_is_two_to_the_t_minus_8_ms,
			 cm_kunit_ms_gen_params),
	KUNIT_CASE_PARAM(ack_timeout_covers_round_trip_and_ack_delay,
			 cm_kunit_ack_gen_params),
	KUNIT_CASE(ack_timeout_bounds_hold_everywhere),
	KUNIT_CASE_PARAM(reject_reason_has_its_text, cm_kunit_rej_gen_params),
	KUNIT_CASE(every_known_reason_has_distinct_text),
	KUNIT_CASE(stock_reject_texts_were_compared),
	{}
};

static struct kunit_suite cm_kunit_arith_suite = {
	.name = "ib_cm_arithmetic",
	.test_cases = cm_kunit_arith_cases,
};

/* ---------------------------------------------------------------------
 * Helpers for suites that work on ids
 *
 * A zeroed struct ib_device serves as the device: ib_create_cm_id() and
 * the listen table only store and compare its address, and the INIT
 * attributes read its (zero) capability flags.  A cm_port of a cm_device
 * without MAD agents stands for a port: cm_alloc_msg() answers -ENODEV
 * for it, which shows that a call got as far as building a message, and
 * nothing is ever sent.  Such ports are set into an id by hand (without
 * the device reference cm_av_set_port() would take) and taken out again
 * by cm_kunit_put_down() before the id is destroyed.
 */

struct cm_kunit_ctx {
	struct ib_device *dev[2];
	struct cm_device *cm_dev;
	struct cm_port *port[2];
};

static int cm_kunit_handler(struct ib_cm_id *cm_id,
			    const struct ib_cm_event *event)
{
	return 0;
}

static int cm_kunit_other_handler(struct ib_cm_id *cm_id,
				  const struct ib_cm_event *event)
{
	return 0;
}

static int cm_kunit_ctx_init(struct kunit *test)
{
	struct cm_kunit_ctx *ctx;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->cm_dev = kunit_kzalloc(test, struct_size(ctx->cm_dev, port, 2),
				    GFP_KERNEL);
	if (!ctx->cm_dev)
		return -ENOMEM;
	cm_device_init(ctx->cm_dev);
	ctx->cm_dev->tp = &cm_ib_transport;
	ctx->cm_dev->nports = 2;
	for (i = 0; i < 2; i++) {
		ctx->dev[i] = kunit_kzalloc(test, sizeof(*ctx->dev[i]),
					    GFP_KERNEL);
		ctx->port[i] = kunit_kzalloc(test, sizeof(*ctx->port[i]),
					     GFP_KERNEL);
		if (!ctx->dev[i] || !ctx->port[i])
			return -ENOMEM;
		ctx->port[i]->cm_dev = ctx->cm_dev;
		ctx->port[i]->port_num = i + 1;
	}
	ctx->cm_dev->ib_device = ctx->dev[0];
	test->priv = ctx;
	return 0;
}

static struct cm_id_priv *cm_kunit_new_id(struct kunit *test,
					  struct ib_device *dev)
{
	struct ib_cm_id *id = ib_create_cm_id(dev, cm_kunit_handler, NULL);

	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(id));
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	return to_priv(id);
}

/* Undo what a test set by hand, so that destroying sends nothing. */
static void cm_kunit_put_down(struct cm_id_priv *p)
{
	spin_lock_irq(&p->lock);
	p->id.state = IB_CM_IDLE;
	p->id.lap_state = IB_CM_LAP_UNINIT;
	p->av.port = NULL;
	p->alt_av.port = NULL;
	memset(&p->av.ah_attr, 0, sizeof(p->av.ah_attr));
	memset(&p->alt_av.ah_attr, 0, sizeof(p->alt_av.ah_attr));
	spin_unlock_irq(&p->lock);
	ib_destroy_cm_id(&p->id);
}

/* The listener for (@dev, @sid), for comparison only: not referenced. */
static struct cm_id_priv *cm_kunit_find_listen(struct ib_device *dev,
					       u64 sid)
{
	struct cm_id_priv *p;

	spin_lock_irq(&cm.lock);
	p = cm_find_listen(dev, cpu_to_be64(sid));
	spin_unlock_irq(&cm.lock);
	return p;
}

/*
 * How many listeners on @dev the table holds.  A walk that meets a resize
 * may miss entries still being moved, so it is repeated until one does not.
 */
static unsigned int cm_kunit_listeners_on(struct ib_device *dev)
{
	struct rhashtable_iter iter;
	struct cm_id_priv *p;
	unsigned int count, tries;
	bool resized;

	for (tries = 0; tries < 100; tries++) {
		count = 0;
		resized = false;
		rhashtable_walk_enter(&cm.listeners, &iter);
		rhashtable_walk_start(&iter);
		while ((p = rhashtable_walk_next(&iter))) {
			if (IS_ERR(p))
				resized = true;
			else if (p->id.device == dev)
				count++;
		}
		rhashtable_walk_stop(&iter);
		rhashtable_walk_exit(&iter);
		if (!resized)
			break;
		msleep(20);
	}
	return count;
}

/* Every test of the listen suite must leave the table as it found it. */
static void cm_kunit_listen_exit(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[0]), 0U);
	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[1]), 0U);
}

/* ---------------------------------------------------------------------
 * Listen table
 */

#define CM_KUNIT_SID	0x1000000000c0ffeeULL

static void create_without_device_or_handler_fails(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_cm_id(NULL, cm_kunit_handler,
						      NULL)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_cm_id(ctx->dev[0], NULL,
						      NULL)), -EINVAL);
}

static void listen_matches_exact_service_id(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	KUNIT_EXPECT_EQ(test, ib_cm_listen(&p->id, cpu_to_be64(CM_KUNIT_SID)),
			0);
	KUNIT_EXPECT_EQ(test, p->id.state, IB_CM_LISTEN);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(p->id.service_id), CM_KUNIT_SID);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_find_listen(ctx->dev[0],
						       CM_KUNIT_SID), p);
	KUNIT_EXPECT_NULL(test, cm_kunit_find_listen(ctx->dev[0],
						     CM_KUNIT_SID + 1));
	KUNIT_EXPECT_NULL(test, cm_kunit_find_listen(ctx->dev[0],
						     CM_KUNIT_SID - 1));
	KUNIT_EXPECT_NULL(test, cm_kunit_find_listen(ctx->dev[1],
						     CM_KUNIT_SID));
	ib_destroy_cm_id(&p->id);
	KUNIT_EXPECT_NULL(test, cm_kunit_find_listen(ctx->dev[0],
						     CM_KUNIT_SID));
}

static void second_listen_on_same_device_is_busy(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *a = cm_kunit_new_id(test, ctx->dev[0]);
	struct cm_id_priv *b = cm_kunit_new_id(test, ctx->dev[0]);

	KUNIT_EXPECT_EQ(test, ib_cm_listen(&a->id, cpu_to_be64(CM_KUNIT_SID)),
			0);
	KUNIT_EXPECT_EQ(test, ib_cm_listen(&b->id, cpu_to_be64(CM_KUNIT_SID)),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, b->id.state, IB_CM_IDLE);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_find_listen(ctx->dev[0],
						       CM_KUNIT_SID), a);
	/* The refused id is free to listen elsewhere. */
	KUNIT_EXPECT_EQ(test,
			ib_cm_listen(&b->id, cpu_to_be64(CM_KUNIT_SID + 1)), 0);
	ib_destroy_cm_id(&a->id);
	ib_destroy_cm_id(&b->id);
}

static void same_service_id_on_another_device_is_allowed(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *a = cm_kunit_new_id(test, ctx->dev[0]);
	struct cm_id_priv *b = cm_kunit_new_id(test, ctx->dev[1]);

	KUNIT_EXPECT_EQ(test, ib_cm_listen(&a->id, cpu_to_be64(CM_KUNIT_SID)),
			0);
	KUNIT_EXPECT_EQ(test, ib_cm_listen(&b->id, cpu_to_be64(CM_KUNIT_SID)),
			0);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_find_listen(ctx->dev[0],
						       CM_KUNIT_SID), a);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_find_listen(ctx->dev[1],
						       CM_KUNIT_SID), b);
	ib_destroy_cm_id(&a->id);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_find_listen(ctx->dev[1],
						       CM_KUNIT_SID), b);
	ib_destroy_cm_id(&b->id);
}

static void assign_service_id_gives_distinct_ids(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p[4];
	unsigned int i, j;
	u64 sid;

	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = cm_kunit_new_id(test, ctx->dev[i % 2]);
		KUNIT_EXPECT_EQ(test, ib_cm_listen(&p[i]->id,
						   IB_CM_ASSIGN_SERVICE_ID), 0);
		KUNIT_EXPECT_EQ(test, p[i]->id.service_id &
				IB_SERVICE_ID_AGN_MASK, IB_CM_ASSIGN_SERVICE_ID);
		sid = be64_to_cpu(p[i]->id.service_id);
		KUNIT_EXPECT_PTR_EQ(test,
				    cm_kunit_find_listen(p[i]->id.device, sid),
				    p[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, p[i]->id.service_id,
					p[j]->id.service_id);
	}
	for (i = 0; i < ARRAY_SIZE(p); i++)
		ib_destroy_cm_id(&p[i]->id);
}

static const u64 cm_kunit_assigned_range[] = {
	0x0200000000000001ULL, 0x0200000000000100ULL, 0x02ffffffffffffffULL,
	0x0200000000c0ffeeULL,
};

static void cm_kunit_u64_desc(const u64 *v, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "0x%016llx", *v);
}

KUNIT_ARRAY_PARAM(cm_kunit_assigned, cm_kunit_assigned_range,
		  cm_kunit_u64_desc);

static void listen_in_assigned_range_is_invalid(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	const u64 *sid = test->param_value;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);
	struct ib_cm_id *shared;

	KUNIT_EXPECT_EQ(test, ib_cm_listen(&p->id, cpu_to_be64(*sid)), -EINVAL);
	KUNIT_EXPECT_EQ(test, p->id.state, IB_CM_IDLE);
	shared = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler,
				     cpu_to_be64(*sid));
	KUNIT_EXPECT_EQ(test, PTR_ERR(shared), -EINVAL);
	ib_destroy_cm_id(&p->id);
}

static void insert_listen_shares_until_last_user(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	__be64 sid = cpu_to_be64(CM_KUNIT_SID);
	struct ib_cm_id *a, *b, *c;

	a = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler, sid);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, a->state, IB_CM_LISTEN);
	b = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler, sid);
	c = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler, sid);
	KUNIT_EXPECT_PTR_EQ(test, b, a);
	KUNIT_EXPECT_PTR_EQ(test, c, a);
	KUNIT_EXPECT_EQ(test, to_priv(a)->listen_sharecount, 3);
	KUNIT_EXPECT_EQ(test, refcount_read(&to_priv(a)->refcount), 3U);

	ib_destroy_cm_id(a);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_find_listen(ctx->dev[0],
						       CM_KUNIT_SID),
			    to_priv(a));
	ib_destroy_cm_id(b);
	KUNIT_EXPECT_EQ(test, to_priv(c)->listen_sharecount, 1);
	KUNIT_EXPECT_EQ(test, c->state, IB_CM_LISTEN);
	ib_destroy_cm_id(c);
	KUNIT_EXPECT_NULL(test, cm_kunit_find_listen(ctx->dev[0],
						     CM_KUNIT_SID));
}

/* An assigned service ID makes a listener of its own each time (stock). */
static void insert_listen_assigns_a_service_id(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct ib_cm_id *a, *b;

	a = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler,
				IB_CM_ASSIGN_SERVICE_ID);
	b = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler,
				IB_CM_ASSIGN_SERVICE_ID);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(a));
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(b));
	KUNIT_EXPECT_PTR_NE(test, a, b);
	KUNIT_EXPECT_EQ(test, a->state, IB_CM_LISTEN);
	KUNIT_EXPECT_EQ(test, a->service_id & IB_SERVICE_ID_AGN_MASK,
			IB_CM_ASSIGN_SERVICE_ID);
	KUNIT_EXPECT_NE(test, a->service_id, b->service_id);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_find_listen(ctx->dev[0],
						       be64_to_cpu(a->service_id)),
			    to_priv(a));
	ib_destroy_cm_id(a);
	ib_destroy_cm_id(b);
}

static void insert_listen_with_other_handler_is_invalid(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	__be64 sid = cpu_to_be64(CM_KUNIT_SID);
	struct ib_cm_id *a, *b;

	a = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler, sid);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	b = ib_cm_insert_listen(ctx->dev[0], cm_kunit_other_handler, sid);
	KUNIT_EXPECT_EQ(test, PTR_ERR(b), -EINVAL);
	KUNIT_EXPECT_EQ(test, to_priv(a)->listen_sharecount, 1);
	/* Another device is another table entry. */
	b = ib_cm_insert_listen(ctx->dev[1], cm_kunit_other_handler, sid);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	KUNIT_EXPECT_PTR_NE(test, b, a);
	ib_destroy_cm_id(a);
	ib_destroy_cm_id(b);
}

/* A listener with a context of its own is not shared by name. */
static void insert_listen_does_not_share_a_private_listener(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	__be64 sid = cpu_to_be64(CM_KUNIT_SID);
	struct ib_cm_id *own, *b;

	own = ib_create_cm_id(ctx->dev[0], cm_kunit_handler, ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(own));
	KUNIT_EXPECT_EQ(test, ib_cm_listen(own, sid), 0);
	b = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler, sid);
	KUNIT_EXPECT_EQ(test, PTR_ERR(b), -EINVAL);
	ib_destroy_cm_id(own);

	/* Without a context, a listener of ib_cm_listen() is shared. */
	own = ib_create_cm_id(ctx->dev[0], cm_kunit_handler, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(own));
	KUNIT_EXPECT_EQ(test, ib_cm_listen(own, sid), 0);
	b = ib_cm_insert_listen(ctx->dev[0], cm_kunit_handler, sid);
	KUNIT_EXPECT_PTR_EQ(test, b, own);
	ib_destroy_cm_id(b);
	ib_destroy_cm_id(own);
}

static const enum ib_cm_state cm_kunit_busy_states[] = {
	IB_CM_LISTEN, IB_CM_REQ_SENT, IB_CM_REQ_RCVD, IB_CM_MRA_REQ_SENT,
	IB_CM_MRA_REQ_RCVD, IB_CM_REP_SENT, IB_CM_REP_RCVD,
	IB_CM_MRA_REP_SENT, IB_CM_MRA_REP_RCVD, IB_CM_ESTABLISHED,
	IB_CM_DREQ_SENT, IB_CM_DREQ_RCVD, IB_CM_TIMEWAIT,
	IB_CM_SIDR_REQ_SENT, IB_CM_SIDR_REQ_RCVD,
};

/* State names (cm.c's) for parameter descriptions. */
static void cm_kunit_state_desc(const enum ib_cm_state *s, char *desc)
{
	strscpy(desc, cm_state_names[*s], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_busy, cm_kunit_busy_states, cm_kunit_state_desc);

static void listen_outside_idle_is_invalid(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	const enum ib_cm_state *s = test->param_value;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	p->id.state = *s;
	KUNIT_EXPECT_EQ(test, ib_cm_listen(&p->id, cpu_to_be64(CM_KUNIT_SID)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, p->id.state, *s);
	KUNIT_EXPECT_NULL(test, cm_kunit_find_listen(ctx->dev[0],
						     CM_KUNIT_SID));
	cm_kunit_put_down(p);
}

static void destroyed_listeners_leave_the_table(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p[16];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = cm_kunit_new_id(test, ctx->dev[i % 2]);
		KUNIT_EXPECT_EQ(test, ib_cm_listen(&p[i]->id, i % 3 ?
				cpu_to_be64(CM_KUNIT_SID + i) :
				IB_CM_ASSIGN_SERVICE_ID), 0);
	}
	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[0]), 8U);
	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[1]), 8U);
	/* Out of creation order, to rebalance the tree on the way. */
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		struct cm_id_priv *q = p[(i * 7) % ARRAY_SIZE(p)];
		struct ib_device *dev = q->id.device;
		u64 sid = be64_to_cpu(q->id.service_id);

		ib_destroy_cm_id(&q->id);
		KUNIT_EXPECT_NULL(test, cm_kunit_find_listen(dev, sid));
	}
	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[0]), 0U);
	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[1]), 0U);
}

static struct kunit_case cm_kunit_listen_cases[] = {
	KUNIT_CASE(create_without_device_or_handler_fails),
	KUNIT_CASE(listen_matches_exact_service_id),
	KUNIT_CASE(second_listen_on_same_device_is_busy),
	KUNIT_CASE(same_service_id_on_another_device_is_allowed),
	KUNIT_CASE(assign_service_id_gives_distinct_ids),
	KUNIT_CASE_PARAM(listen_in_assigned_range_is_invalid,
			 cm_kunit_assigned_gen_params),
	KUNIT_CASE(insert_listen_shares_until_last_user),
	KUNIT_CASE(insert_listen_assigns_a_service_id),
	KUNIT_CASE(insert_listen_with_other_handler_is_invalid),
	KUNIT_CASE(insert_listen_does_not_share_a_private_listener),
	KUNIT_CASE_PARAM(listen_outside_idle_is_invalid,
			 cm_kunit_busy_gen_params),
	KUNIT_CASE(destroyed_listeners_leave_the_table),
	{}
};

static struct kunit_suite cm_kunit_listen_suite = {
	.name = "ib_cm_listen",
	.init = cm_kunit_ctx_init,
	.exit = cm_kunit_listen_exit,
	.test_cases = cm_kunit_listen_cases,
};

/* ---------------------------------------------------------------------
 * The state machine: its tables and the function every change goes through
 */

static const struct cm_transition *cm_kunit_row(bool lap, unsigned int i)
{
	return lap ? &cm_lap_table[i] : &cm_state_table[i];
}

static unsigned int cm_kunit_rows(bool lap)
{
	return lap ? ARRAY_SIZE(cm_lap_table) : ARRAY_SIZE(cm_state_table);
}

/* Every row names real states and a real cause, and no row is there twice. */
static void tables_name_real_states_once(struct kunit *test)
{
	unsigned int lap, i, j;

	for (lap = 0; lap < 2; lap++) {
		unsigned int max = lap ? IB_CM_MRA_LAP_RCVD : IB_CM_SIDR_REQ_RCVD;

		KUNIT_EXPECT_GT(test, cm_kunit_rows(lap), 5U);
		for (i = 0; i < cm_kunit_rows(lap); i++) {
			const struct cm_transition *t = cm_kunit_row(lap, i);

			KUNIT_EXPECT_LE_MSG(test, t->from, max, "row %u", i);
			KUNIT_EXPECT_LE_MSG(test, t->to, max, "row %u", i);
			KUNIT_EXPECT_LT_MSG(test, t->cause, CM_CAUSES, "row %u", i);
			for (j = 0; j < i; j++) {
				const struct cm_transition *u = cm_kunit_row(lap, j);

				KUNIT_EXPECT_FALSE_MSG(test, t->from == u->from &&
						       t->to == u->to &&
						       t->cause == u->cause,
						       "rows %u and %u", j, i);
			}
		}
	}
}

/* Each row of both tables is a change cm_change_state() makes quietly. */
static void every_row_is_a_legal_change(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);
	unsigned int lap, i;

	for (lap = 0; lap < 2; lap++) {
		for (i = 0; i < cm_kunit_rows(lap); i++) {
			const struct cm_transition *t = cm_kunit_row(lap, i);

			kunit_warning_suppress(test) {
				spin_lock_irq(&p->lock);
				if (lap)
					p->id.lap_state = t->from;
				else
					p->id.state = t->from;
				cm_change_state(p, lap, t->to, t->cause);
				spin_unlock_irq(&p->lock);
				KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 0);
			}
			KUNIT_EXPECT_EQ_MSG(test, lap ? p->id.lap_state :
					    p->id.state, t->to, "row %u", i);
		}
	}
	cm_kunit_put_down(p);
}

struct cm_kunit_illegal_case {
	const char *desc;
	bool lap;
	unsigned int from;
	unsigned int to;
	enum cm_cause cause;
};

static const struct cm_kunit_illegal_case cm_kunit_illegal_cases[] = {
	{ "IDLE -> ESTABLISHED on an RTU", false, IB_CM_IDLE,
	  IB_CM_ESTABLISHED, CM_RECV_RTU },
	{ "ESTABLISHED -> REQ_SENT on a REQ", false, IB_CM_ESTABLISHED,
	  IB_CM_REQ_SENT, CM_SEND_REQ },
	{ "TIMEWAIT -> IDLE on destroy", false, IB_CM_TIMEWAIT, IB_CM_IDLE,
	  CM_DESTROY },
	{ "REQ_SENT -> IDLE for a DREP", false, IB_CM_REQ_SENT, IB_CM_IDLE,
	  CM_RECV_DREP },
	{ "LISTEN -> REQ_RCVD on a REQ", false, IB_CM_LISTEN,
	  IB_CM_REQ_RCVD, CM_RECV_REQ },
	{ "LAP_RCVD -> LAP_IDLE on an APR", true, IB_CM_LAP_RCVD,
	  IB_CM_LAP_IDLE, CM_RECV_APR },
	{ "LAP_UNINIT -> LAP_SENT", true, IB_CM_LAP_UNINIT, IB_CM_LAP_SENT,
	  CM_RECV_LAP },
};

static void cm_kunit_illegal_desc(const struct cm_kunit_illegal_case *c,
				  char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_illegal, cm_kunit_illegal_cases,
		  cm_kunit_illegal_desc);

/* A change that is in neither table warns, and is still made. */
static void a_change_outside_the_tables_warns(struct kunit *test)
{
	const struct cm_kunit_illegal_case *c = test->param_value;
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	kunit_warning_suppress(test) {
		spin_lock_irq(&p->lock);
		if (c->lap)
			p->id.lap_state = c->from;
		else
			p->id.state = c->from;
		cm_change_state(p, c->lap, c->to, c->cause);
		spin_unlock_irq(&p->lock);
		KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 1);
	}
	KUNIT_EXPECT_EQ(test, c->lap ? p->id.lap_state : p->id.state, c->to);
	cm_kunit_put_down(p);
}

static struct kunit_case cm_kunit_sm_cases[] = {
	KUNIT_CASE(tables_name_real_states_once),
	KUNIT_CASE(every_row_is_a_legal_change),
	KUNIT_CASE_PARAM(a_change_outside_the_tables_warns,
			 cm_kunit_illegal_gen_params),
	{}
};

static struct kunit_suite cm_kunit_sm_suite = {
	.name = "ib_cm_state_machine",
	.init = cm_kunit_ctx_init,
	.test_cases = cm_kunit_sm_cases,
};

/* ---------------------------------------------------------------------
 * API misuse
 */

static u8 cm_kunit_data[256];

static int call_rep(struct ib_cm_id *id, u8 len, u8 rnr)
{
	struct ib_cm_rep_param param = {
		.qp_num = 0x1234, .starting_psn = 0x42,
		.private_data = cm_kunit_data, .private_data_len = len,
		.rnr_retry_count = rnr,
	};

	return ib_send_cm_rep(id, &param);
}

static int call_rep_ok(struct ib_cm_id *id)
{
	return call_rep(id, IB_CM_REP_PRIVATE_DATA_SIZE, 7);
}

static int call_rep_long(struct ib_cm_id *id)
{
	return call_rep(id, IB_CM_REP_PRIVATE_DATA_SIZE + 1, 7);
}

static int call_rep_bad_rnr_retry(struct ib_cm_id *id)
{
	return call_rep(id, 0, 8);
}

static int call_rtu_ok(struct ib_cm_id *id)
{
	return ib_send_cm_rtu(id, cm_kunit_data, IB_CM_RTU_PRIVATE_DATA_SIZE);
}

static int call_rtu_long(struct ib_cm_id *id)
{
	return ib_send_cm_rtu(id, cm_kunit_data,
			      IB_CM_RTU_PRIVATE_DATA_SIZE + 1);
}

static int call_dreq_ok(struct ib_cm_id *id)
{
	return ib_send_cm_dreq(id, NULL, 0);
}

static int call_dreq_long(struct ib_cm_id *id)
{
	return ib_send_cm_dreq(id, cm_kunit_data,
			       IB_CM_DREQ_PRIVATE_DATA_SIZE + 1);
}

static int call_drep_ok(struct ib_cm_id *id)
{
	return ib_send_cm_drep(id, NULL, 0);
}

static int call_drep_long(struct ib_cm_id *id)
{
	return ib_send_cm_drep(id, cm_kunit_data,
			       IB_CM_DREP_PRIVATE_DATA_SIZE + 1);
}

static int call_rej_ok(struct ib_cm_id *id)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			      cm_kunit_data, IB_CM_REJ_PRIVATE_DATA_SIZE);
}

static int call_rej_long(struct ib_cm_id *id)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			      cm_kunit_data, IB_CM_REJ_PRIVATE_DATA_SIZE + 1);
}

static int call_rej_long_ari(struct ib_cm_id *id)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, cm_kunit_data,
			      IB_CM_REJ_ARI_LENGTH + 1, NULL, 0);
}

static int call_mra(struct ib_cm_id *id)
{
	return ib_prepare_cm_mra(id);
}

static int call_sidr_rep_ok(struct ib_cm_id *id)
{
	struct ib_cm_sidr_rep_param param = { .status = IB_SIDR_SUCCESS };

	return ib_send_cm_sidr_rep(id, &param);
}

static int call_sidr_rep_long_info(struct ib_cm_id *id)
{
	struct ib_cm_sidr_rep_param param = {
		.info = cm_kunit_data,
		.info_length = IB_CM_SIDR_REP_INFO_LENGTH + 1,
	};

	return ib_send_cm_sidr_rep(id, &param);
}

static int call_sidr_rep_long_data(struct ib_cm_id *id)
{
	struct ib_cm_sidr_rep_param param = {
		.private_data = cm_kunit_data,
		.private_data_len = IB_CM_SIDR_REP_PRIVATE_DATA_SIZE + 1,
	};

	return ib_send_cm_sidr_rep(id, &param);
}

static int call_notify_unknown(struct ib_cm_id *id)
{
	return ib_cm_notify(id, IB_EVENT_QP_FATAL);
}

static int call_notify_comm_est(struct ib_cm_id *id)
{
	return ib_cm_notify(id, IB_EVENT_COMM_EST);
}

static int call_notify_path_mig(struct ib_cm_id *id)
{
	return ib_cm_notify(id, IB_EVENT_PATH_MIG);
}

static int call_qp_attr(struct ib_cm_id *id, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = 0;

	return ib_cm_init_qp_attr(id, &attr, &mask);
}

static int call_qp_init(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_INIT);
}

static int call_qp_rtr(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_RTR);
}

static int call_qp_rts(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_RTS);
}

static int call_qp_sqd(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_SQD);
}

static struct sa_path_rec cm_kunit_path = {
	.rec_type = SA_PATH_REC_TYPE_IB, .mtu = IB_MTU_1024,
};

static int call_req(struct ib_cm_id *id, struct ib_cm_req_param *param)
{
	if (!param->primary_path)
		param->primary_path = &cm_kunit_path;
	if (!param->qp_type)
		param->qp_type = IB_QPT_RC;
	return ib_send_cm_req(id, param);
}

static int call_req_without_path(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = { .qp_type = IB_QPT_RC };

	return ib_send_cm_req(id, &param);
}

static int call_req_ud(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = {
		.primary_path = &cm_kunit_path, .qp_type = IB_QPT_UD,
	};

	return ib_send_cm_req(id, &param);
}

static int call_req_long(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = {
		.private_data = cm_kunit_data,
		.private_data_len = IB_CM_REQ_PRIVATE_DATA_SIZE + 1,
	};

	return call_req(id, &param);
}

static int call_req_timeout_too_big(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = { .remote_cm_response_timeout = 32 };

	return call_req(id, &param);
}

static int call_req_too_many_retries(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = { .max_cm_retries = 16 };

	return call_req(id, &param);
}

static int call_req_alt_mtu_differs(struct ib_cm_id *id)
{
	static struct sa_path_rec alt = {
		.rec_type = SA_PATH_REC_TYPE_IB, .mtu = IB_MTU_2048,
	};
	struct ib_cm_req_param param = { .alternate_path = &alt };

	return call_req(id, &param);
}

static int call_sidr_req_without_path(struct ib_cm_id *id)
{
	struct ib_cm_sidr_req_param param = { .service_id = 1 };

	return ib_send_cm_sidr_req(id, &param);
}

static int call_sidr_req_long(struct ib_cm_id *id)
{
	struct ib_cm_sidr_req_param param = {
		.path = &cm_kunit_path, .private_data = cm_kunit_data,
		.private_data_len = IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE + 1,
	};

	return ib_send_cm_sidr_req(id, &param);
}

static int call_null_params(struct ib_cm_id *id)
{
	return ib_send_cm_req(id, NULL);
}

static int call_rep_null(struct ib_cm_id *id)
{
	return ib_send_cm_rep(id, NULL);
}

static int call_sidr_req_null(struct ib_cm_id *id)
{
	return ib_send_cm_sidr_req(id, NULL);
}

static int call_sidr_rep_null(struct ib_cm_id *id)
{
	return ib_send_cm_sidr_rep(id, NULL);
}

struct cm_kunit_misuse_case {
	const char *desc;
	enum ib_cm_state state;
	enum ib_cm_lap_state lap_state;
	int (*call)(struct ib_cm_id *id);
	int ret;
	enum ib_cm_state after;
	bool port;	/* a port without MAD agents: sends fail -ENODEV */
};

#define MISUSE(d, s, c, r, a)		{ d, s, IB_CM_LAP_UNINIT, c, r, a, false }
#define MISUSE_PORT(d, s, c, r, a)	{ d, s, IB_CM_LAP_UNINIT, c, r, a, true }
#define MISUSE_LAP(d, s, l, c, r, a)	{ d, s, l, c, r, a, false }

static const struct cm_kunit_misuse_case cm_kunit_misuse_cases[] = {
	MISUSE("REP from IDLE", IB_CM_IDLE, call_rep_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("RTU from IDLE", IB_CM_IDLE, call_rtu_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("DREQ from IDLE", IB_CM_IDLE, call_dreq_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("DREP from IDLE", IB_CM_IDLE, call_drep_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("REJ from IDLE", IB_CM_IDLE, call_rej_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("MRA from IDLE", IB_CM_IDLE, call_mra, -EINVAL, IB_CM_IDLE),
	MISUSE("SIDR_REP from IDLE", IB_CM_IDLE, call_sidr_rep_ok, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP INIT attrs in IDLE", IB_CM_IDLE, call_qp_init, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP RTR attrs in IDLE", IB_CM_IDLE, call_qp_rtr, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP RTS attrs in IDLE", IB_CM_IDLE, call_qp_rts, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP RTR attrs in LISTEN", IB_CM_LISTEN, call_qp_rtr, -EINVAL,
	       IB_CM_LISTEN),
	MISUSE("QP INIT attrs in TIMEWAIT", IB_CM_TIMEWAIT, call_qp_init,
	       -EINVAL, IB_CM_TIMEWAIT),
	MISUSE("QP INIT attrs in REQ_SENT", IB_CM_REQ_SENT, call_qp_init, 0,
	       IB_CM_REQ_SENT),
	MISUSE("QP RTR attrs in REQ_SENT", IB_CM_REQ_SENT, call_qp_rtr,
	       -EINVAL, IB_CM_REQ_SENT),
	MISUSE("QP RTS attrs in MRA_REQ_RCVD", IB_CM_MRA_REQ_RCVD, call_qp_rts,
	       -EINVAL, IB_CM_MRA_REQ_RCVD),
	MISUSE("QP SQD attrs when established", IB_CM_ESTABLISHED, call_qp_sqd,
	       -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("unknown event to notify", IB_CM_ESTABLISHED,
	       call_notify_unknown, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("unknown event to notify in IDLE", IB_CM_IDLE,
	       call_notify_unknown, -EINVAL, IB_CM_IDLE),
	MISUSE("COMM_EST in IDLE", IB_CM_IDLE, call_notify_comm_est, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("COMM_EST when established", IB_CM_ESTABLISHED,
	       call_notify_comm_est, -EISCONN, IB_CM_ESTABLISHED),
	MISUSE("PATH_MIG in IDLE", IB_CM_IDLE, call_notify_path_mig, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("PATH_MIG without alternate path", IB_CM_ESTABLISHED,
	       call_notify_path_mig, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REP when established", IB_CM_ESTABLISHED, call_rep_ok, -EINVAL,
	       IB_CM_ESTABLISHED),
	MISUSE("RTU when established", IB_CM_ESTABLISHED, call_rtu_ok, -EINVAL,
	       IB_CM_ESTABLISHED),
	MISUSE("DREP when established", IB_CM_ESTABLISHED, call_drep_ok,
	       -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REJ when established", IB_CM_ESTABLISHED, call_rej_ok, -EINVAL,
	       IB_CM_ESTABLISHED),
	MISUSE("MRA when established without LAP", IB_CM_ESTABLISHED, call_mra,
	       -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REP twice", IB_CM_REP_SENT, call_rep_ok, -EINVAL,
	       IB_CM_REP_SENT),
	MISUSE("DREQ in TIMEWAIT", IB_CM_TIMEWAIT, call_dreq_ok, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("DREP in TIMEWAIT", IB_CM_TIMEWAIT, call_drep_ok, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("REJ in TIMEWAIT", IB_CM_TIMEWAIT, call_rej_ok, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("MRA in TIMEWAIT", IB_CM_TIMEWAIT, call_mra, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("MRA on a listener", IB_CM_LISTEN, call_mra, -EINVAL,
	       IB_CM_LISTEN),
	MISUSE("SIDR_REP after SIDR_REQ sent", IB_CM_SIDR_REQ_SENT,
	       call_sidr_rep_ok, -EINVAL, IB_CM_SIDR_REQ_SENT),
	MISUSE_PORT("REP with long private data", IB_CM_REQ_RCVD,
		    call_rep_long, -EINVAL, IB_CM_REQ_RCVD),
	MISUSE_PORT("REP with RNR retry count 8 (as 7) reaches the port",
		    IB_CM_REQ_RCVD, call_rep_bad_rnr_retry, -ENODEV,
		    IB_CM_REQ_RCVD),
	MISUSE_PORT("REP with full private data reaches the port",
		    IB_CM_REQ_RCVD, call_rep_ok, -ENODEV, IB_CM_REQ_RCVD),
	MISUSE_PORT("REP after MRA reaches the port", IB_CM_MRA_REQ_SENT,
		    call_rep_ok, -ENODEV, IB_CM_MRA_REQ_SENT),
	MISUSE_PORT("RTU with long private data", IB_CM_REP_RCVD,
		    call_rtu_long, -EINVAL, IB_CM_REP_RCVD),
	MISUSE_PORT("RTU with full private data reaches the port",
		    IB_CM_REP_RCVD, call_rtu_ok, -ENODEV, IB_CM_REP_RCVD),
	MISUSE("DREQ with long private data", IB_CM_ESTABLISHED,
	       call_dreq_long, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("DREP with long private data", IB_CM_DREQ_RCVD, call_drep_long,
	       -EINVAL, IB_CM_DREQ_RCVD),
	MISUSE("REJ with long private data", IB_CM_REQ_RCVD, call_rej_long,
	       -EINVAL, IB_CM_REQ_RCVD),
	MISUSE("REJ with long ARI", IB_CM_REQ_RCVD, call_rej_long_ari, -EINVAL,
	       IB_CM_REQ_RCVD),
	MISUSE("REJ of a received REQ returns to IDLE", IB_CM_REQ_RCVD,
	       call_rej_ok, 0, IB_CM_IDLE),
	MISUSE("REJ of a received REP returns to IDLE", IB_CM_REP_RCVD,
	       call_rej_ok, 0, IB_CM_IDLE),
	MISUSE("SIDR_REP with long info", IB_CM_SIDR_REQ_RCVD,
	       call_sidr_rep_long_info, -EINVAL, IB_CM_SIDR_REQ_RCVD),
	MISUSE("SIDR_REP with long private data", IB_CM_SIDR_REQ_RCVD,
	       call_sidr_rep_long_data, -EINVAL, IB_CM_SIDR_REQ_RCVD),
	MISUSE("MRA for a received REQ", IB_CM_REQ_RCVD, call_mra, 0,
	       IB_CM_MRA_REQ_SENT),
	MISUSE("MRA for a received REP", IB_CM_REP_RCVD, call_mra, 0,
	       IB_CM_MRA_REP_SENT),
	MISUSE("MRA twice for a REQ", IB_CM_MRA_REQ_SENT, call_mra, -EINVAL,
	       IB_CM_MRA_REQ_SENT),
	MISUSE_LAP("MRA for a received LAP", IB_CM_ESTABLISHED, IB_CM_LAP_RCVD,
		   call_mra, 0, IB_CM_ESTABLISHED),
	MISUSE_LAP("MRA for a LAP we sent", IB_CM_ESTABLISHED, IB_CM_LAP_SENT,
		   call_mra, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REQ without primary path", IB_CM_IDLE, call_req_without_path,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("REQ for a UD QP", IB_CM_IDLE, call_req_ud, -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with long private data", IB_CM_IDLE, call_req_long,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with response timeout 32", IB_CM_IDLE,
	       call_req_timeout_too_big, -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with 16 CM retries", IB_CM_IDLE, call_req_too_many_retries,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with alternate path of another MTU", IB_CM_IDLE,
	       call_req_alt_mtu_differs, -EINVAL, IB_CM_IDLE),
	MISUSE("REQ without parameters", IB_CM_IDLE, call_null_params, -EINVAL,
	       IB_CM_IDLE),
	MISUSE_PORT("REP without parameters", IB_CM_REQ_RCVD, call_rep_null,
		    -EINVAL, IB_CM_REQ_RCVD),
	MISUSE("SIDR_REQ without parameters", IB_CM_IDLE, call_sidr_req_null,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("SIDR_REP without parameters", IB_CM_SIDR_REQ_RCVD,
	       call_sidr_rep_null, -EINVAL, IB_CM_SIDR_REQ_RCVD),
	MISUSE("SIDR_REQ without path", IB_CM_IDLE, call_sidr_req_without_path,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("SIDR_REQ with long private data", IB_CM_IDLE,
	       call_sidr_req_long, -EINVAL, IB_CM_IDLE),
};

static void cm_kunit_misuse_desc(const struct cm_kunit_misuse_case *c,
				 char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_misuse, cm_kunit_misuse_cases,
		  cm_kunit_misuse_desc);

static void api_call_is_refused_or_allowed(struct kunit *test)
{
	const struct cm_kunit_misuse_case *c = test->param_value;
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	p->id.state = c->state;
	p->id.lap_state = c->lap_state;
	if (c->port)
		p->av.port = ctx->port[0];
	KUNIT_EXPECT_EQ(test, c->call(&p->id), c->ret);
	KUNIT_EXPECT_EQ(test, p->id.state, c->after);
	KUNIT_EXPECT_NULL(test, p->msg);
	if (c->lap_state == IB_CM_LAP_RCVD && !c->ret)
		KUNIT_EXPECT_EQ(test, p->id.lap_state, IB_CM_MRA_LAP_SENT);
	cm_kunit_put_down(p);
}

/* With an alternate path, PATH_MIG swaps the paths and ends any LAP. */
static void path_migration_swaps_primary_and_alternate(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	p->id.state = IB_CM_ESTABLISHED;
	p->av.port = ctx->port[0];
	p->av.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	p->av.ah_attr.ib.dlid = 0x11;
	p->alt_av.port = ctx->port[1];
	p->alt_av.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	p->alt_av.ah_attr.ib.dlid = 0x22;
	KUNIT_EXPECT_EQ(test, ib_cm_notify(&p->id, IB_EVENT_PATH_MIG), 0);
	KUNIT_EXPECT_PTR_EQ(test, p->av.port, ctx->port[1]);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&p->av.ah_attr), 0x22U);
	KUNIT_EXPECT_PTR_EQ(test, p->alt_av.port, ctx->port[0]);
	KUNIT_EXPECT_EQ(test, p->id.lap_state, IB_CM_LAP_IDLE);
	/* A LAP under way blocks migration. */
	p->id.lap_state = IB_CM_LAP_SENT;
	KUNIT_EXPECT_EQ(test, ib_cm_notify(&p->id, IB_EVENT_PATH_MIG), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, p->av.port, ctx->port[1]);
	cm_kunit_put_down(p);
}

/*
 * An id that cannot send its DREQ (no path) still leaves ESTABLISHED for
 * TIMEWAIT, and timewait ends in IDLE with a TIMEWAIT_EXIT event.
 */
static struct completion cm_kunit_timewait_done;
static enum ib_cm_event_type cm_kunit_timewait_event;

static int cm_kunit_timewait_handler(struct ib_cm_id *cm_id,
				     const struct ib_cm_event *event)
{
	cm_kunit_timewait_event = event->event;
	complete(&cm_kunit_timewait_done);
	return 0;
}

static void dreq_without_path_still_passes_through_timewait(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct ib_cm_id *id;

	init_completion(&cm_kunit_timewait_done);
	id = ib_create_cm_id(ctx->dev[0], cm_kunit_timewait_handler, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(id));
	id->state = IB_CM_ESTABLISHED;
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), -EINVAL);
	/* Timewait lasts a millisecond here: it may be over already. */
	KUNIT_EXPECT_TRUE(test, id->state == IB_CM_TIMEWAIT ||
			  id->state == IB_CM_IDLE);
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&cm_kunit_timewait_done,
							  10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, cm_kunit_timewait_event, IB_CM_TIMEWAIT_EXIT);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	ib_destroy_cm_id(id);
}

static struct kunit_case cm_kunit_misuse_cases_list[] = {
	KUNIT_CASE_PARAM(api_call_is_refused_or_allowed,
			 cm_kunit_misuse_gen_params),
	KUNIT_CASE(path_migration_swaps_primary_and_alternate),
	KUNIT_CASE(dreq_without_path_still_passes_through_timewait),
	{}
};

static struct kunit_suite cm_kunit_misuse_suite = {
	.name = "ib_cm_api_misuse",
	.init = cm_kunit_ctx_init,
	.test_cases = cm_kunit_misuse_cases_list,
};

/* ---------------------------------------------------------------------
 * QP attributes
 */

#define CM_KUNIT_INIT_MASK	(IB_QP_STATE | IB_QP_ACCESS_FLAGS | \
				 IB_QP_PKEY_INDEX | IB_QP_PORT)
#define CM_KUNIT_RTR_MASK	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | \
				 IB_QP_DEST_QPN | IB_QP_RQ_PSN)
#define CM_KUNIT_RTR_RD		(IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)
#define CM_KUNIT_RTS_MASK	(IB_QP_STATE | IB_QP_SQ_PSN)
#define CM_KUNIT_RTS_RC		(IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
				 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_TIMEOUT)

struct cm_kunit_qp_case {
	const char *desc;
	enum ib_qp_type qp_type;
	enum ib_qp_state want;
	bool alt;
	enum ib_cm_lap_state lap_state;
	u8 responder_resources;
	u16 dlid_datapath;
	int mask;
};

static const struct cm_kunit_qp_case cm_kunit_qp_cases[] = {
	{ "RC INIT", IB_QPT_RC, IB_QPS_INIT, false, 0, 4, 0,
	  CM_KUNIT_INIT_MASK },
	{ "RC INIT without responder resources", IB_QPT_RC, IB_QPS_INIT, false,
	  0, 0, 0, CM_KUNIT_INIT_MASK },
	{ "UC INIT", IB_QPT_UC, IB_QPS_INIT, false, 0, 0, 0,
	  CM_KUNIT_INIT_MASK },
	{ "XRC target INIT", IB_QPT_XRC_TGT, IB_QPS_INIT, false, 0, 4, 0,
	  CM_KUNIT_INIT_MASK },
	{ "RC RTR", IB_QPT_RC, IB_QPS_RTR, false, 0, 4, 0,
	  CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ "RC RTR with alternate path", IB_QPT_RC, IB_QPS_RTR, true, 0, 4, 0,
	  CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD | IB_QP_ALT_PATH },
	{ "RC RTR with data path DLID", IB_QPT_RC, IB_QPS_RTR, false, 0, 4,
	  0x99, CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ "RC RTR with permissive data path DLID", IB_QPT_RC, IB_QPS_RTR, false,
	  0, 4, 0xffff, CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ "UC RTR", IB_QPT_UC, IB_QPS_RTR, false, 0, 4, 0, CM_KUNIT_RTR_MASK },
	{ "UC RTR with alternate path", IB_QPT_UC, IB_QPS_RTR, true, 0, 4, 0,
	  CM_KUNIT_RTR_MASK | IB_QP_ALT_PATH },
	{ "XRC target RTR", IB_QPT_XRC_TGT, IB_QPS_RTR, false, 0, 4, 0,
	  CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ "XRC initiator RTR", IB_QPT_XRC_INI, IB_QPS_RTR, false, 0, 4, 0,
	  CM_KUNIT_RTR_MASK },
	{ "XRC target RTR with alternate path", IB_QPT_XRC_TGT, IB_QPS_RTR,
	  true, 0, 4, 0, CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD | IB_QP_ALT_PATH },
	{ "RC RTS", IB_QPT_RC, IB_QPS_RTS, false, 0, 4, 0,
	  CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC },
	{ "RC RTS with alternate path", IB_QPT_RC, IB_QPS_RTS, true, 0, 4, 0,
	  CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC | IB_QP_PATH_MIG_STATE },
	{ "UC RTS", IB_QPT_UC, IB_QPS_RTS, false, 0, 4, 0, CM_KUNIT_RTS_MASK },
	{ "UC RTS with alternate path", IB_QPT_UC, IB_QPS_RTS, true, 0, 4, 0,
	  CM_KUNIT_RTS_MASK | IB_QP_PATH_MIG_STATE },
	{ "XRC target RTS", IB_QPT_XRC_TGT, IB_QPS_RTS, false, 0, 4, 0,
	  CM_KUNIT_RTS_MASK | IB_QP_TIMEOUT },
	{ "XRC initiator RTS", IB_QPT_XRC_INI, IB_QPS_RTS, false, 0, 4, 0,
	  CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC },
	{ "XRC initiator RTS with alternate path", IB_QPT_XRC_INI, IB_QPS_RTS,
	  true, 0, 4, 0,
	  CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC | IB_QP_PATH_MIG_STATE },
	{ "RC RTS after a LAP loads only the alternate path", IB_QPT_RC,
	  IB_QPS_RTS, true, IB_CM_LAP_IDLE, 4, 0,
	  IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE },
	{ "RC RTS while a LAP is answered", IB_QPT_RC, IB_QPS_RTS, true,
	  IB_CM_MRA_LAP_SENT, 4, 0, IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE },
};

static void cm_kunit_qp_desc(const struct cm_kunit_qp_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_qp, cm_kunit_qp_cases, cm_kunit_qp_desc);

static void cm_kunit_set_av(struct cm_av *av, struct cm_port *port, u16 dlid,
			    u16 pkey_index, u8 timeout)
{
	av->port = port;
	av->ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	av->ah_attr.ib.dlid = dlid;
	av->ah_attr.port_num = port->port_num;
	av->pkey_index = pkey_index;
	av->timeout = timeout;
}

static void qp_attrs_match_the_connection(struct kunit *test)
{
	const struct cm_kunit_qp_case *c = test->param_value;
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);
	struct ib_qp_attr attr = { .qp_state = c->want };
	int mask = 0;

	p->id.state = IB_CM_REP_RCVD;
	p->id.lap_state = c->lap_state;
	p->qp_type = c->qp_type;
	cm_kunit_set_av(&p->av, ctx->port[0], 0x11, 3, 14);
	p->av.dlid_datapath = c->dlid_datapath;
	if (c->alt)
		cm_kunit_set_av(&p->alt_av, ctx->port[1], 0x22, 5, 18);
	p->remote_qpn = cpu_to_be32(0x123456);
	p->rq_psn = cpu_to_be32(0x654321);
	p->sq_psn = cpu_to_be32(0xabcdef);
	p->path_mtu = IB_MTU_2048;
	p->responder_resources = c->responder_resources;
	p->initiator_depth = 5;
	p->retry_count = 6;
	p->rnr_retry_count = 7;

	KUNIT_ASSERT_EQ(test, ib_cm_init_qp_attr(&p->id, &attr, &mask), 0);
	KUNIT_EXPECT_EQ(test, mask, c->mask);
	KUNIT_EXPECT_EQ(test, attr.qp_state, c->want);

	if (mask & IB_QP_ACCESS_FLAGS)
		KUNIT_EXPECT_EQ(test, attr.qp_access_flags,
				c->responder_resources ?
				IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
				IB_ACCESS_REMOTE_ATOMIC : IB_ACCESS_REMOTE_WRITE);
	if (mask & IB_QP_PKEY_INDEX)
		KUNIT_EXPECT_EQ(test, attr.pkey_index, 3);
	if (mask & IB_QP_PORT)
		KUNIT_EXPECT_EQ(test, attr.port_num, 1U);
	if (mask & IB_QP_AV) {
		u16 dlid = c->dlid_datapath && c->dlid_datapath != 0xffff ?
			   c->dlid_datapath : 0x11;

		KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&attr.ah_attr),
				(u32)dlid);
		/* The id's own address vector keeps the CM's DLID. */
		KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&p->av.ah_attr), 0x11U);
	}
	if (mask & IB_QP_PATH_MTU)
		KUNIT_EXPECT_EQ(test, attr.path_mtu, IB_MTU_2048);
	if (mask & IB_QP_DEST_QPN)
		KUNIT_EXPECT_EQ(test, attr.dest_qp_num, 0x123456U);
	if (mask & IB_QP_RQ_PSN)
		KUNIT_EXPECT_EQ(test, attr.rq_psn, 0x654321U);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		KUNIT_EXPECT_EQ(test, attr.max_dest_rd_atomic, 4);
	if (mask & IB_QP_MIN_RNR_TIMER)
		KUNIT_EXPECT_EQ(test, attr.min_rnr_timer, 0);
	if (mask & IB_QP_SQ_PSN)
		KUNIT_EXPECT_EQ(test, attr.sq_psn, 0xabcdefU);
	if (mask & IB_QP_RETRY_CNT)
		KUNIT_EXPECT_EQ(test, attr.retry_cnt, 6);
	if (mask & IB_QP_RNR_RETRY)
		KUNIT_EXPECT_EQ(test, attr.rnr_retry, 7);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		KUNIT_EXPECT_EQ(test, attr.max_rd_atomic, 5);
	if (mask & IB_QP_TIMEOUT)
		KUNIT_EXPECT_EQ(test, attr.timeout, 14);
	if (mask & IB_QP_PATH_MIG_STATE)
		KUNIT_EXPECT_EQ(test, attr.path_mig_state, IB_MIG_REARM);
	if (mask & IB_QP_ALT_PATH) {
		KUNIT_EXPECT_EQ(test, attr.alt_port_num, 2U);
		KUNIT_EXPECT_EQ(test, attr.alt_pkey_index, 5);
		KUNIT_EXPECT_EQ(test, attr.alt_timeout, 18);
		KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&attr.alt_ah_attr),
				0x22U);
	}
	cm_kunit_put_down(p);
}

/* An alternate port whose address has no DLID is not an alternate path. */
static void alternate_path_needs_a_dlid(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int mask = 0;

	p->id.state = IB_CM_ESTABLISHED;
	p->qp_type = IB_QPT_RC;
	cm_kunit_set_av(&p->av, ctx->port[0], 0x11, 0, 14);
	cm_kunit_set_av(&p->alt_av, ctx->port[1], 0, 0, 14);
	KUNIT_ASSERT_EQ(test, ib_cm_init_qp_attr(&p->id, &attr, &mask), 0);
	KUNIT_EXPECT_EQ(test, mask & IB_QP_ALT_PATH, 0);
	KUNIT_EXPECT_EQ(test, ib_cm_notify(&p->id, IB_EVENT_PATH_MIG), -EINVAL);
	cm_kunit_put_down(p);
}

static const enum ib_cm_state cm_kunit_qp_states[] = {
	IB_CM_REQ_RCVD, IB_CM_MRA_REQ_SENT, IB_CM_REP_RCVD, IB_CM_MRA_REP_SENT,
	IB_CM_REP_SENT, IB_CM_MRA_REP_RCVD, IB_CM_ESTABLISHED,
};

KUNIT_ARRAY_PARAM(cm_kunit_qp_state, cm_kunit_qp_states, cm_kunit_state_desc);

static void qp_attrs_are_given_in_connecting_states(struct kunit *test)
{
	const enum ib_cm_state *s = test->param_value;
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);
	enum ib_qp_state want;

	p->id.state = *s;
	p->qp_type = IB_QPT_RC;
	cm_kunit_set_av(&p->av, ctx->port[0], 0x11, 0, 14);
	for (want = IB_QPS_INIT; want <= IB_QPS_RTS; want++) {
		struct ib_qp_attr attr = { .qp_state = want };
		int mask = 0;

		KUNIT_EXPECT_EQ(test, ib_cm_init_qp_attr(&p->id, &attr, &mask),
				0);
		KUNIT_EXPECT_NE(test, mask, 0);
	}
	cm_kunit_put_down(p);
}

static struct kunit_case cm_kunit_qp_cases_list[] = {
	KUNIT_CASE_PARAM(qp_attrs_match_the_connection, cm_kunit_qp_gen_params),
	KUNIT_CASE(alternate_path_needs_a_dlid),
	KUNIT_CASE_PARAM(qp_attrs_are_given_in_connecting_states,
			 cm_kunit_qp_state_gen_params),
	{}
};

static struct kunit_suite cm_kunit_qp_suite = {
	.name = "ib_cm_qp_attr",
	.init = cm_kunit_ctx_init,
	.test_cases = cm_kunit_qp_cases_list,
};

/* ---------------------------------------------------------------------
 * Hostile input
 */

#define CM_KUNIT_OK	(-1)	/* cm_check_mad(): keep the MAD */

struct cm_kunit_check_case {
	const char *desc;
	int len;
	u8 base_version;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
	__be16 attr_id;
	int why;
};

/* A header that passes, but for its length and attribute ID. */
#define CM_KUNIT_HDR(desc, len, attr, why) \
	{ desc, len, IB_MGMT_BASE_VERSION, IB_MGMT_CLASS_CM, \
	  CM_CLASS_VERSION, IB_MGMT_METHOD_SEND, attr, why }

static const struct cm_kunit_check_case cm_kunit_check_cases[] = {
	CM_KUNIT_HDR("REQ of full length", 256, CM_REQ_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("MRA", 256, CM_MRA_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("REP", 256, CM_REP_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("SIDR_REP", 256, CM_SIDR_REP_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("APR, the last attribute", 256, CM_APR_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("longer than a MAD", 2048, CM_REQ_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("one byte short", 255, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	CM_KUNIT_HDR("header only", 24, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	CM_KUNIT_HDR("empty", 0, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	CM_KUNIT_HDR("negative length", -1, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	{ "short and of another class", 100, 1, 0x81, 1, 1, 0,
	  CM_DROP_LENGTH },
	{ "base version 0", 256, 0, IB_MGMT_CLASS_CM, 2, 3, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "base version 2", 256, 2, IB_MGMT_CLASS_CM, 2, 3, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "OPA base version", 256, 0x80, IB_MGMT_CLASS_CM, 2, 3, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "class version 1", 256, 1, IB_MGMT_CLASS_CM, 1, 3, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "class version 3", 256, 1, IB_MGMT_CLASS_CM, 3, 3, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "class version 0xff", 256, 1, IB_MGMT_CLASS_CM, 0xff, 3, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "subnet management class", 256, 1, IB_MGMT_CLASS_SUBN_LID_ROUTED, 2,
	  3, CM_REQ_ATTR_ID, CM_DROP_VERSION },
	{ "subnet administration class", 256, 1, IB_MGMT_CLASS_SUBN_ADM, 2, 3,
	  CM_REQ_ATTR_ID, CM_DROP_VERSION },
	{ "performance class", 256, 1, IB_MGMT_CLASS_PERF_MGMT, 2, 3, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "class 0x87", 256, 1, 0x87, 2, 3, CM_REQ_ATTR_ID, CM_DROP_VERSION },
	{ "wrong class and method", 256, 1, 0x03, 2, 1, CM_REQ_ATTR_ID,
	  CM_DROP_VERSION },
	{ "GET", 256, 1, IB_MGMT_CLASS_CM, 2, IB_MGMT_METHOD_GET, CM_REQ_ATTR_ID,
	  CM_DROP_METHOD },
	{ "SET", 256, 1, IB_MGMT_CLASS_CM, 2, IB_MGMT_METHOD_SET, CM_REQ_ATTR_ID,
	  CM_DROP_METHOD },
	{ "GET response", 256, 1, IB_MGMT_CLASS_CM, 2,
	  IB_MGMT_METHOD_GET_RESP, CM_REQ_ATTR_ID, CM_DROP_METHOD },
	{ "SEND with the response bit", 256, 1, IB_MGMT_CLASS_CM, 2,
	  IB_MGMT_METHOD_SEND | IB_MGMT_METHOD_RESP, CM_REQ_ATTR_ID, CM_DROP_METHOD },
	{ "method 0", 256, 1, IB_MGMT_CLASS_CM, 2, 0, CM_REQ_ATTR_ID, CM_DROP_METHOD },
	{ "wrong method and attribute", 256, 1, IB_MGMT_CLASS_CM, 2, 1, 0,
	  CM_DROP_METHOD },
	CM_KUNIT_HDR("attribute 0", 256, cpu_to_be16(0x0000), CM_DROP_ATTR),
	CM_KUNIT_HDR("ClassPortInfo", 256, cpu_to_be16(0x0001), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0x0f", 256, cpu_to_be16(0x000f), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0x1b", 256, cpu_to_be16(0x001b), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0xff", 256, cpu_to_be16(0x00ff), CM_DROP_ATTR),
	CM_KUNIT_HDR("REQ byte-swapped", 256, cpu_to_be16(0x1000), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0x1010", 256, cpu_to_be16(0x1010), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0xffff", 256, cpu_to_be16(0xffff), CM_DROP_ATTR),
};

static void cm_kunit_check_desc(const struct cm_kunit_check_case *c,
				char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_check, cm_kunit_check_cases, cm_kunit_check_desc);

struct cm_kunit_rx {
	struct ib_mad_recv_wc wc;
	struct ib_wc ib_wc;
	struct ib_mad mad;
};

static void cm_kunit_rx_init(struct cm_kunit_rx *rx, int len)
{
	rx->wc.recv_buf.mad = &rx->mad;
	rx->wc.wc = &rx->ib_wc;
	rx->wc.mad_len = len;
}

static void check_mad_classifies_header(struct kunit *test)
{
	const struct cm_kunit_check_case *c = test->param_value;
	struct cm_kunit_rx *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);
	struct ib_mad_hdr *hdr;

	KUNIT_ASSERT_NOT_NULL(test, rx);
	cm_kunit_rx_init(rx, c->len);
	hdr = &rx->mad.mad_hdr;
	hdr->base_version = c->base_version;
	hdr->mgmt_class = c->mgmt_class;
	hdr->class_version = c->class_version;
	hdr->method = c->method;
	hdr->attr_id = c->attr_id;
	KUNIT_EXPECT_EQ(test, cm_check_mad(&rx->wc), c->why);
}

/* Only REQ .. APR are CM attributes, at indices 0..10. */
static void attribute_ids_outside_req_to_apr_are_invalid(struct kunit *test)
{
	unsigned int id;

	for (id = 0; id <= 0xffff; id++) {
		bool valid = id >= be16_to_cpu(CM_REQ_ATTR_ID) &&
			     id <= be16_to_cpu(CM_APR_ATTR_ID);

		if (cm_attr_valid(cpu_to_be16(id)) != valid)
			KUNIT_FAIL(test, "attribute 0x%04x valid=%d", id, !valid);
		if (valid)
			KUNIT_EXPECT_EQ(test, cm_attr_index(cpu_to_be16(id)),
					id - be16_to_cpu(CM_REQ_ATTR_ID));
	}
}

static const u8 cm_kunit_qp_type_bytes[][2] = {
	/* byte 43 (low 3 bits: type 2 bits, flow control 1), byte 51 low 3 */
	{ 0x00, 0 }, { 0x01, 7 }, { 0x02, 0 }, { 0x03, 1 }, { 0x04, 0 },
	{ 0x06, 1 }, { 0x06, 0 }, { 0x06, 2 }, { 0x07, 1 }, { 0xf9, 0 },
};

/* The QP type a REQ asks for, worked out from the raw bytes. */
static enum ib_qp_type cm_kunit_req_qp_type(const u8 *data)
{
	switch ((data[43] >> 1) & 3) {
	case 0:
		return IB_QPT_RC;
	case 1:
		return IB_QPT_UC;
	case 3:
		return (data[51] & 7) == 1 ? IB_QPT_XRC_TGT : IB_QPT_MAX;
	default:
		return IB_QPT_MAX;
	}
}

static void req_transport_selects_qp_type(struct kunit *test)
{
	union cm_kunit_msg *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct cm_req_msg *req;
	u8 *data;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	req = &m->req;
	data = m->mad.data;
	for (i = 0; i < ARRAY_SIZE(cm_kunit_qp_type_bytes); i++) {
		data[43] = cm_kunit_qp_type_bytes[i][0];
		data[51] = cm_kunit_qp_type_bytes[i][1];
		KUNIT_EXPECT_EQ_MSG(test, cm_req_qp_type(req),
				    cm_kunit_req_qp_type(data),
				    "bytes %02x %02x", data[43], data[51]);
	}
	data[43] = 0x00;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_RC);
	data[43] = 0x02;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_UC);
	data[43] = 0x04;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_MAX);
	data[43] = 0x06;
	data[51] = 0x01;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_XRC_TGT);
}

static void req_validity_needs_type_mtu_and_comm_id(struct kunit *test)
{
	struct cm_req_msg *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	unsigned int mtu;

	KUNIT_ASSERT_NOT_NULL(test, req);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, 1);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, CM_REQ_TRANSPORT_RC);
	for (mtu = 0; mtu < 16; mtu++) {
		IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, mtu);
		KUNIT_EXPECT_EQ_MSG(test, cm_req_valid(req),
				    mtu >= IB_MTU_256 && mtu <= IB_MTU_4096,
				    "MTU %u", mtu);
	}
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, IB_MTU_4096);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, 0);
	KUNIT_EXPECT_FALSE(test, cm_req_valid(req));
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, 0xffffffff);
	KUNIT_EXPECT_TRUE(test, cm_req_valid(req));
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, 2);
	KUNIT_EXPECT_FALSE(test, cm_req_valid(req));
}

/* What cm_check_mad() should say, worked out independently. */
static int cm_kunit_expected_why(const struct cm_kunit_rx *rx)
{
	const struct ib_mad_hdr *hdr = &rx->mad.mad_hdr;
	u16 attr = be16_to_cpu(hdr->attr_id);

	if (rx->wc.mad_len < 256)
		return CM_DROP_LENGTH;
	if (hdr->base_version != 1 || hdr->mgmt_class != 0x07 ||
	    hdr->class_version != 2)
		return CM_DROP_VERSION;
	if (hdr->method != 0x03)
		return CM_DROP_METHOD;
	if (attr < be16_to_cpu(CM_REQ_ATTR_ID) ||
	    attr > be16_to_cpu(CM_APR_ATTR_ID))
		return CM_DROP_ATTR;
	return CM_KUNIT_OK;
}

static bool cm_kunit_any(const u8 *p, size_t len)
{
	return memchr_inv(p, 0, len);
}

#define CM_KUNIT_SWEEP		100000
#define CM_KUNIT_SEED		0x1bc0ffee

/*
 * Whether path @alt of @req came through a router from a sender that did
 * not know its own LID here: then the SL is the packet's.
 */
static bool cm_kunit_routed_sender(struct cm_req_msg *req, bool alt)
{
	if (alt)
		return !IBA_GET(CM_REQ_ALTERNATE_SUBNET_LOCAL, req) &&
		       IBA_GET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req) == 0xffff;
	return !IBA_GET(CM_REQ_PRIMARY_SUBNET_LOCAL, req) &&
	       IBA_GET(CM_REQ_PRIMARY_LOCAL_PORT_LID, req) == 0xffff;
}

/* Random MADs, biased towards headers that pass, through every check. */
static void random_mads_are_classified_without_crashing(struct kunit *test)
{
	struct cm_kunit_rx *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);
	unsigned int seen[CM_DROP_ATTR + 2] = {};
	unsigned int valid_reqs = 0, alt_paths = 0;
	struct sa_path_rec *path;
	struct rnd_state rnd;
	unsigned int i;

	path = kunit_kzalloc(test, sizeof(*path), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rx);
	KUNIT_ASSERT_NOT_NULL(test, path);
	prandom_seed_state(&rnd, CM_KUNIT_SEED);
	/* The SL a routed REQ's path takes from the packet. */
	rx->ib_wc.sl = 9;
	for (i = 0; i < CM_KUNIT_SWEEP; i++) {
		struct ib_mad_hdr *hdr = &rx->mad.mad_hdr;
		/* The same random bytes, read as a REQ and as a REP. */
		struct cm_req_msg *req = (struct cm_req_msg *)&rx->mad;
		struct cm_rep_msg *rep = (struct cm_rep_msg *)&rx->mad;
		const u8 *d = rx->mad.data;
		u32 r = prandom_u32_state(&rnd);
		int why, want;
		u8 want_sl;
		bool alt;

		prandom_bytes_state(&rnd, &rx->mad, sizeof(rx->mad));
		cm_kunit_rx_init(rx, r & 3 ? 256 : (int)(r >> 2) % 512 - 64);
		if ((r >> 12) & 3)
			hdr->base_version = IB_MGMT_BASE_VERSION;
		if ((r >> 14) & 3)
			hdr->mgmt_class = IB_MGMT_CLASS_CM;
		if ((r >> 16) & 3)
			hdr->class_version = CM_CLASS_VERSION;
		if ((r >> 18) & 3)
			hdr->method = IB_MGMT_METHOD_SEND;
		if ((r >> 20) & 3)
			hdr->attr_id = cpu_to_be16(0x0c + (r >> 22) % 19);

		why = cm_check_mad(&rx->wc);
		want = cm_kunit_expected_why(rx);
		if (why != want) {
			KUNIT_FAIL(test, "MAD %u: cm_check_mad() %d, expected %d",
				   i, why, want);
			break;
		}
		seen[why + 1]++;

		/* The REQ checks that need no port, on every MAD. */
		if (cm_req_qp_type(req) != cm_kunit_req_qp_type(d)) {
			KUNIT_FAIL(test, "MAD %u: QP type %d", i,
				   cm_req_qp_type(req));
			break;
		}
		if (cm_req_valid(req) !=
		    (cm_kunit_req_qp_type(d) != IB_QPT_MAX &&
		     (d[50] >> 4) >= 1 && (d[50] >> 4) <= 5 &&
		     cm_kunit_any(d, 4))) {
			KUNIT_FAIL(test, "MAD %u: cm_req_valid() wrong", i);
			break;
		}
		valid_reqs += cm_req_valid(req);
		alt = cm_req_has_alt_path(req);
		/* A LID, or an OPA GID (OUI 00:06:6a at bytes 108-110). */
		if (alt != (cm_kunit_any(d + 96, 2) ||
			    (d[108] == 0x00 && d[109] == 0x06 &&
			     d[110] == 0x6a))) {
			KUNIT_FAIL(test, "MAD %u: alternate path wrong", i);
			break;
		}
		alt_paths += alt;
		if (be32_to_cpu(cm_rep_qpn(rep, IB_QPT_RC)) !=
		    (d[12] << 16 | d[13] << 8 | d[14]) ||
		    be32_to_cpu(cm_rep_qpn(rep, IB_QPT_XRC_INI)) !=
		    (d[16] << 16 | d[17] << 8 | d[18])) {
			KUNIT_FAIL(test, "MAD %u: REP QPN wrong", i);
			break;
		}

		/* Building a path from any REQ is safe and copies fields. */
		memset(path, 0, sizeof(*path));
		cm_path_from_req(req, path, r & 1, &rx->ib_wc);
		want_sl = (r & 1 ? d[138] : d[94]) >> 4;
		if (cm_kunit_routed_sender(req, r & 1))
			want_sl = rx->ib_wc.sl;
		if (path->mtu != d[50] >> 4 || path->sl != want_sl ||
		    path->packet_life_time !=
		    max(((r & 1 ? d[139] : d[95]) >> 3) - 1, 0) ||
		    be16_to_cpu(path->pkey) != (d[48] << 8 | d[49])) {
			KUNIT_FAIL(test, "MAD %u: path from REQ wrong", i);
			break;
		}
		if (!(i % 4096))
			cond_resched();
	}
	/* The bias made every verdict occur often. */
	for (i = 0; i < ARRAY_SIZE(seen); i++)
		KUNIT_EXPECT_GT_MSG(test, seen[i], CM_KUNIT_SWEEP / 50,
				    "verdict %d", (int)i - 1);
	KUNIT_EXPECT_GT(test, valid_reqs, CM_KUNIT_SWEEP / 20);
	KUNIT_EXPECT_GT(test, alt_paths, CM_KUNIT_SWEEP / 2);
	kunit_info(test, "%u MADs: %u kept, %u short, %u version, %u method, %u attribute; %u valid REQs",
		   CM_KUNIT_SWEEP, seen[0], seen[1 + CM_DROP_LENGTH],
		   seen[1 + CM_DROP_VERSION], seen[1 + CM_DROP_METHOD],
		   seen[1 + CM_DROP_ATTR], valid_reqs);
}

static struct kunit_case cm_kunit_hostile_cases[] = {
	KUNIT_CASE_PARAM(check_mad_classifies_header,
			 cm_kunit_check_gen_params),
	KUNIT_CASE(attribute_ids_outside_req_to_apr_are_invalid),
	KUNIT_CASE(req_transport_selects_qp_type),
	KUNIT_CASE(req_validity_needs_type_mtu_and_comm_id),
	KUNIT_CASE_SLOW(random_mads_are_classified_without_crashing),
	{}
};

static struct kunit_suite cm_kunit_hostile_suite = {
	.name = "ib_cm_hostile",
	.test_cases = cm_kunit_hostile_cases,
};

#include "cm_kunit_proto.c"

kunit_test_suites(&cm_kunit_wire_suite, &cm_kunit_arith_suite,
		  &cm_kunit_listen_suite, &cm_kunit_sm_suite,
		  &cm_kunit_misuse_suite,
		  &cm_kunit_qp_suite, &cm_kunit_hostile_suite,
		  &fk_active_suite, &fk_passive_suite, &fk_sidr_lap_suite,
		  &fk_dup_suite, &fk_contract_suite, &fk_state_suite,
		  &fk_flood_suite, &fk_order_suite, &fk_fault_suite);


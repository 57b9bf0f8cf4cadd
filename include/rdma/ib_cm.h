/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_cm: kernel interface of the InfiniBand Communication Manager.
 *
 * The CM sets up, tears down and resolves connections by exchanging the
 * MADs of IBTA Vol 1 chapter 12 on behalf of its users (rdma_cm, IPoIB
 * connected mode, SRP and others).  Users talk to it through a struct
 * ib_cm_id and receive its events through an ib_cm_handler callback.
 *
 * This header is a drop-in replacement for the one shipped with the
 * kernel the module is built for.  Modules compiled against that other
 * header call into ours, so every structure below must keep the exact
 * member order, types and therefore offsets of the original, and every
 * enumeration its numeric values.  tools/testing/abi/check.sh compares
 * them mechanically; do not reorder, insert or resize anything here.
 */

#ifndef IB_CM_H
#define IB_CM_H

/*
 * Users expect these to come along with this header: they provide
 * struct sa_path_rec, struct rdma_ucm_ece and the verbs types.
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>
#include <rdma/rdma_cm.h>

/* MAD attribute IDs of the CM messages (IBTA Vol 1 table 12.6), big-endian. */
#define CM_REQ_ATTR_ID		cpu_to_be16(0x0010)
#define CM_MRA_ATTR_ID		cpu_to_be16(0x0011)
#define CM_REJ_ATTR_ID		cpu_to_be16(0x0012)
#define CM_REP_ATTR_ID		cpu_to_be16(0x0013)
#define CM_RTU_ATTR_ID		cpu_to_be16(0x0014)
#define CM_DREQ_ATTR_ID		cpu_to_be16(0x0015)
#define CM_DREP_ATTR_ID		cpu_to_be16(0x0016)
#define CM_SIDR_REQ_ATTR_ID	cpu_to_be16(0x0017)
#define CM_SIDR_REP_ATTR_ID	cpu_to_be16(0x0018)
#define CM_LAP_ATTR_ID		cpu_to_be16(0x0019)
#define CM_APR_ATTR_ID		cpu_to_be16(0x001A)

/*
 * Service IDs, all big-endian.  The top byte of a service ID names the
 * authority that assigned it (IB_SERVICE_ID_AGN_MASK selects it).  Passing
 * IB_CM_ASSIGN_SERVICE_ID to ib_cm_listen() asks the CM to pick an unused
 * ID from its locally administered range.  The IB_CMA_* pair describes the
 * IDs rdma_cm derives from a port space and port number, and the IB_SDP_*
 * pair the range reserved for the Sockets Direct Protocol.
 */
#define IB_SERVICE_ID_AGN_MASK	cpu_to_be64(0xFF00000000000000ULL)
#define IB_CM_ASSIGN_SERVICE_ID	cpu_to_be64(0x0200000000000000ULL)
#define IB_CMA_SERVICE_ID	cpu_to_be64(0x0000000001000000ULL)
#define IB_CMA_SERVICE_ID_MASK	cpu_to_be64(0xFFFFFFFFFF000000ULL)
#define IB_SDP_SERVICE_ID	cpu_to_be64(0x0000000000010000ULL)
#define IB_SDP_SERVICE_ID_MASK	cpu_to_be64(0xFFFFFFFFFFFF0000ULL)

/**
 * enum ib_cm_state - where a cm_id stands in the CM protocol.
 * @IB_CM_IDLE: Fresh, or back at rest after a failed or refused attempt.
 * @IB_CM_LISTEN: Accepting REQs and SIDR_REQs for its service ID.
 * @IB_CM_REQ_SENT: Active side; our REQ is out, waiting for the answer.
 * @IB_CM_REQ_RCVD: Passive side; a REQ was delivered to the user.
 * @IB_CM_MRA_REQ_SENT: Passive side; the user asked for more time to
 *	answer the REQ (see ib_prepare_cm_mra()).
 * @IB_CM_MRA_REQ_RCVD: Active side; the peer acknowledged our REQ with an
 *	MRA and will answer later.
 * @IB_CM_REP_SENT: Passive side; our REP is out, waiting for the RTU.
 * @IB_CM_REP_RCVD: Active side; a REP was delivered to the user.
 * @IB_CM_MRA_REP_SENT: Active side; the user asked for more time to send
 *	the RTU.
 * @IB_CM_MRA_REP_RCVD: Passive side; the peer acknowledged our REP with
 *	an MRA.
 * @IB_CM_ESTABLISHED: The connection is up.
 * @IB_CM_DREQ_SENT: We asked to disconnect, waiting for the DREP.
 * @IB_CM_DREQ_RCVD: The peer asked to disconnect; the user owes a DREP.
 * @IB_CM_TIMEWAIT: Disconnected; the local identifiers are held back
 *	until stray packets of the old connection have drained.
 * @IB_CM_SIDR_REQ_SENT: Our SIDR_REQ is out, waiting for the SIDR_REP.
 * @IB_CM_SIDR_REQ_RCVD: A SIDR_REQ was delivered to the user, who owes
 *	a SIDR_REP.
 *
 * Kept up to date by the CM itself; users may read it (for example to
 * log it) but never write it.
 */
enum ib_cm_state {
	IB_CM_IDLE,
	IB_CM_LISTEN,
	IB_CM_REQ_SENT,
	IB_CM_REQ_RCVD,
	IB_CM_MRA_REQ_SENT,
	IB_CM_MRA_REQ_RCVD,
	IB_CM_REP_SENT,
	IB_CM_REP_RCVD,
	IB_CM_MRA_REP_SENT,
	IB_CM_MRA_REP_RCVD,
	IB_CM_ESTABLISHED,
	IB_CM_DREQ_SENT,
	IB_CM_DREQ_RCVD,
	IB_CM_TIMEWAIT,
	IB_CM_SIDR_REQ_SENT,
	IB_CM_SIDR_REQ_RCVD
};

/**
 * enum ib_cm_lap_state - progress of an alternate path load (LAP/APR).
 * @IB_CM_LAP_UNINIT: Initial value: no LAP has been received and the QP
 *	has not migrated to its alternate path.  A connection may be
 *	established in this state.
 * @IB_CM_LAP_IDLE: An APR was received or the QP migrated to its
 *	alternate path; no alternate path exchange is under way.
 * @IB_CM_LAP_SENT: We sent a LAP and wait for the APR.
 * @IB_CM_LAP_RCVD: A LAP arrived from the peer.
 * @IB_CM_MRA_LAP_SENT: We answered a received LAP with an MRA.
 * @IB_CM_MRA_LAP_RCVD: The peer answered our LAP with an MRA.
 *
 * Owned by the CM, like &enum ib_cm_state.
 */
enum ib_cm_lap_state {
	IB_CM_LAP_UNINIT,
	IB_CM_LAP_IDLE,
	IB_CM_LAP_SENT,
	IB_CM_LAP_RCVD,
	IB_CM_MRA_LAP_SENT,
	IB_CM_MRA_LAP_RCVD,
};

/**
 * enum ib_cm_event_type - what an ib_cm_handler call reports.
 * @IB_CM_REQ_ERROR: Our REQ went unanswered through all retries; the
 *	id is idle again.  @param.send_status says why.
 * @IB_CM_REQ_RECEIVED: A REQ matched a listener; delivered on a new id.
 *	Details in @param.req_rcvd.
 * @IB_CM_REP_ERROR: Our REP got no RTU through all retries.
 *	@param.send_status says why.
 * @IB_CM_REP_RECEIVED: The peer accepted our REQ.  Details in
 *	@param.rep_rcvd.
 * @IB_CM_RTU_RECEIVED: The peer confirmed our REP; now established.
 * @IB_CM_USER_ESTABLISHED: Established because the user reported
 *	IB_EVENT_COMM_EST through ib_cm_notify() before any RTU arrived.
 * @IB_CM_DREQ_ERROR: Our DREQ got no DREP through all retries; the id
 *	goes to timewait anyway.  @param.send_status says why.
 * @IB_CM_DREQ_RECEIVED: The peer wants to disconnect; answer with
 *	ib_send_cm_drep().
 * @IB_CM_DREP_RECEIVED: The peer answered our DREQ.
 * @IB_CM_TIMEWAIT_EXIT: Timewait is over; the id is idle.
 * @IB_CM_MRA_RECEIVED: The peer needs more time to answer one of our
 *	messages.  Details in @param.mra_rcvd.
 * @IB_CM_REJ_RECEIVED: The peer refused the connection or gave up on it
 *	(reason IB_CM_REJ_TIMEOUT).  Details in @param.rej_rcvd.
 * @IB_CM_LAP_ERROR: Our LAP got no answer.  Never reported by this
 *	implementation, which has no call that sends a LAP.
 * @IB_CM_LAP_RECEIVED: The peer proposes an alternate path.  Details in
 *	@param.lap_rcvd.
 * @IB_CM_APR_RECEIVED: The peer answered our LAP.  Details in
 *	@param.apr_rcvd.
 * @IB_CM_SIDR_REQ_ERROR: Our SIDR_REQ went unanswered.
 *	@param.send_status says why.
 * @IB_CM_SIDR_REQ_RECEIVED: A SIDR_REQ matched a listener; delivered on
 *	a new id.  Details in @param.sidr_req_rcvd.
 * @IB_CM_SIDR_REP_RECEIVED: The answer to our SIDR_REQ.  Details in
 *	@param.sidr_rep_rcvd.
 *
 * The @param names refer to the members of &struct ib_cm_event.
 */
enum ib_cm_event_type {
	IB_CM_REQ_ERROR,
	IB_CM_REQ_RECEIVED,
	IB_CM_REP_ERROR,
	IB_CM_REP_RECEIVED,
	IB_CM_RTU_RECEIVED,
	IB_CM_USER_ESTABLISHED,
	IB_CM_DREQ_ERROR,
	IB_CM_DREQ_RECEIVED,
	IB_CM_DREP_RECEIVED,
	IB_CM_TIMEWAIT_EXIT,
	IB_CM_MRA_RECEIVED,
	IB_CM_REJ_RECEIVED,
	IB_CM_LAP_ERROR,
	IB_CM_LAP_RECEIVED,
	IB_CM_APR_RECEIVED,
	IB_CM_SIDR_REQ_ERROR,
	IB_CM_SIDR_REQ_RECEIVED,
	IB_CM_SIDR_REP_RECEIVED
};

/**
 * enum ib_cm_data_size - room for user data in each CM message, in bytes.
 * @IB_CM_REQ_PRIVATE_DATA_SIZE: Private data carried by a REQ.
 * @IB_CM_MRA_PRIVATE_DATA_SIZE: Private data carried by an MRA.
 * @IB_CM_REJ_PRIVATE_DATA_SIZE: Private data carried by a REJ.
 * @IB_CM_REP_PRIVATE_DATA_SIZE: Private data carried by a REP.
 * @IB_CM_RTU_PRIVATE_DATA_SIZE: Private data carried by an RTU.
 * @IB_CM_DREQ_PRIVATE_DATA_SIZE: Private data carried by a DREQ.
 * @IB_CM_DREP_PRIVATE_DATA_SIZE: Private data carried by a DREP.
 * @IB_CM_REJ_ARI_LENGTH: Additional rejection information in a REJ.
 * @IB_CM_LAP_PRIVATE_DATA_SIZE: Private data carried by a LAP.
 * @IB_CM_APR_PRIVATE_DATA_SIZE: Private data carried by an APR.
 * @IB_CM_APR_INFO_LENGTH: Additional information in an APR.
 * @IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE: Private data carried by a SIDR_REQ.
 * @IB_CM_SIDR_REP_PRIVATE_DATA_SIZE: Private data carried by a SIDR_REP.
 * @IB_CM_SIDR_REP_INFO_LENGTH: Additional information in a SIDR_REP.
 *
 * These are the upper bounds for the matching length arguments and
 * parameter fields of the ib_send_cm_*() calls; longer data is refused
 * with -EINVAL.
 */
enum ib_cm_data_size {
	IB_CM_REQ_PRIVATE_DATA_SIZE	 = 92,
	IB_CM_MRA_PRIVATE_DATA_SIZE	 = 222,
	IB_CM_REJ_PRIVATE_DATA_SIZE	 = 148,
	IB_CM_REP_PRIVATE_DATA_SIZE	 = 196,
	IB_CM_RTU_PRIVATE_DATA_SIZE	 = 224,
	IB_CM_DREQ_PRIVATE_DATA_SIZE	 = 220,
	IB_CM_DREP_PRIVATE_DATA_SIZE	 = 224,
	IB_CM_REJ_ARI_LENGTH		 = 72,
	IB_CM_LAP_PRIVATE_DATA_SIZE	 = 168,
	IB_CM_APR_PRIVATE_DATA_SIZE	 = 148,
	IB_CM_APR_INFO_LENGTH		 = 72,
	IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE = 216,
	IB_CM_SIDR_REP_PRIVATE_DATA_SIZE = 136,
	IB_CM_SIDR_REP_INFO_LENGTH	 = 72,
};

/**
 * enum ib_cm_rej_reason - reason codes of a REJ (IBTA Vol 1 table 12.7).
 * @IB_CM_REJ_NO_QP: No QP available at the sender.
 * @IB_CM_REJ_NO_EEC: No EE context available at the sender.
 * @IB_CM_REJ_NO_RESOURCES: The sender lacks some other resource.
 * @IB_CM_REJ_TIMEOUT: The sender gave up waiting; the CM sends it when
 *	an id whose REQ is still unanswered is destroyed.  The ARI carries
 *	the sender's CA GUID.
 * @IB_CM_REJ_UNSUPPORTED: The request asks for something not supported.
 * @IB_CM_REJ_INVALID_COMM_ID: The communication ID is not known.
 * @IB_CM_REJ_INVALID_COMM_INSTANCE: The communication instance is wrong.
 * @IB_CM_REJ_INVALID_SERVICE_ID: Nobody listens on the service ID.
 * @IB_CM_REJ_INVALID_TRANSPORT_TYPE: The QP transport type is refused.
 * @IB_CM_REJ_STALE_CONN: The QP or communication ID still belongs to an
 *	older connection.
 * @IB_CM_REJ_RDC_NOT_EXIST: The reliable datagram channel is unknown.
 * @IB_CM_REJ_INVALID_GID: Bad primary GID; the ARI may suggest one.
 * @IB_CM_REJ_INVALID_LID: Bad primary LID; the ARI may suggest one.
 * @IB_CM_REJ_INVALID_SL: Bad primary service level.
 * @IB_CM_REJ_INVALID_TRAFFIC_CLASS: Bad primary traffic class.
 * @IB_CM_REJ_INVALID_HOP_LIMIT: Bad primary hop limit.
 * @IB_CM_REJ_INVALID_PACKET_RATE: Bad primary packet rate.
 * @IB_CM_REJ_INVALID_ALT_GID: Bad alternate GID.
 * @IB_CM_REJ_INVALID_ALT_LID: Bad alternate LID.
 * @IB_CM_REJ_INVALID_ALT_SL: Bad alternate service level.
 * @IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS: Bad alternate traffic class.
 * @IB_CM_REJ_INVALID_ALT_HOP_LIMIT: Bad alternate hop limit.
 * @IB_CM_REJ_INVALID_ALT_PACKET_RATE: Bad alternate packet rate.
 * @IB_CM_REJ_PORT_CM_REDIRECT: Send CM messages elsewhere; the ARI holds
 *	the class port info naming the new CM endpoint.
 * @IB_CM_REJ_PORT_REDIRECT: Connect to another port, given in the ARI.
 * @IB_CM_REJ_INVALID_MTU: The path MTU is refused.
 * @IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES: Not enough responder
 *	resources for the requested RDMA read/atomic depth.
 * @IB_CM_REJ_CONSUMER_DEFINED: Refused by the user; the private data
 *	may say why.
 * @IB_CM_REJ_INVALID_RNR_RETRY: The RNR retry count is refused.
 * @IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID: The sender's communication ID is
 *	already in use with this peer.
 * @IB_CM_REJ_INVALID_CLASS_VERSION: The CM class version is unsupported.
 * @IB_CM_REJ_INVALID_FLOW_LABEL: Bad primary flow label.
 * @IB_CM_REJ_INVALID_ALT_FLOW_LABEL: Bad alternate flow label.
 * @IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED: A vendor option is refused.
 *
 * Value 34 is not used.  ibcm_reject_msg() turns a code into text.
 */
enum ib_cm_rej_reason {
	IB_CM_REJ_NO_QP				= 1,
	IB_CM_REJ_NO_EEC			= 2,
	IB_CM_REJ_NO_RESOURCES			= 3,
	IB_CM_REJ_TIMEOUT			= 4,
	IB_CM_REJ_UNSUPPORTED			= 5,
	IB_CM_REJ_INVALID_COMM_ID		= 6,
	IB_CM_REJ_INVALID_COMM_INSTANCE		= 7,
	IB_CM_REJ_INVALID_SERVICE_ID		= 8,
	IB_CM_REJ_INVALID_TRANSPORT_TYPE	= 9,
	IB_CM_REJ_STALE_CONN			= 10,
	IB_CM_REJ_RDC_NOT_EXIST			= 11,
	IB_CM_REJ_INVALID_GID			= 12,
	IB_CM_REJ_INVALID_LID			= 13,
	IB_CM_REJ_INVALID_SL			= 14,
	IB_CM_REJ_INVALID_TRAFFIC_CLASS		= 15,
	IB_CM_REJ_INVALID_HOP_LIMIT		= 16,
	IB_CM_REJ_INVALID_PACKET_RATE		= 17,
	IB_CM_REJ_INVALID_ALT_GID		= 18,
	IB_CM_REJ_INVALID_ALT_LID		= 19,
	IB_CM_REJ_INVALID_ALT_SL		= 20,
	IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS	= 21,
	IB_CM_REJ_INVALID_ALT_HOP_LIMIT		= 22,
	IB_CM_REJ_INVALID_ALT_PACKET_RATE	= 23,
	IB_CM_REJ_PORT_CM_REDIRECT		= 24,
	IB_CM_REJ_PORT_REDIRECT			= 25,
	IB_CM_REJ_INVALID_MTU			= 26,
	IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES	= 27,
	IB_CM_REJ_CONSUMER_DEFINED		= 28,
	IB_CM_REJ_INVALID_RNR_RETRY		= 29,
	IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID	= 30,
	IB_CM_REJ_INVALID_CLASS_VERSION		= 31,
	IB_CM_REJ_INVALID_FLOW_LABEL		= 32,
	IB_CM_REJ_INVALID_ALT_FLOW_LABEL	= 33,
	IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED	= 35,
};

/**
 * enum ib_cm_apr_status - answer codes of an APR (reply to a LAP).
 * @IB_CM_APR_SUCCESS: The alternate path was loaded.
 * @IB_CM_APR_INVALID_COMM_ID: The communication ID is not known.
 * @IB_CM_APR_UNSUPPORTED: Path migration is not supported.
 * @IB_CM_APR_REJECT: Refused for another reason.
 * @IB_CM_APR_REDIRECT: Use the path given in the additional information.
 * @IB_CM_APR_IS_CURRENT: The proposed path is the one already in use.
 * @IB_CM_APR_INVALID_QPN_EECN: The QP or EE context number is wrong.
 * @IB_CM_APR_INVALID_LID: Bad alternate LID.
 * @IB_CM_APR_INVALID_GID: Bad alternate GID.
 * @IB_CM_APR_INVALID_FLOW_LABEL: Bad alternate flow label.
 * @IB_CM_APR_INVALID_TCLASS: Bad alternate traffic class.
 * @IB_CM_APR_INVALID_HOP_LIMIT: Bad alternate hop limit.
 * @IB_CM_APR_INVALID_PACKET_RATE: Bad alternate packet rate.
 * @IB_CM_APR_INVALID_SL: Bad alternate service level.
 */
enum ib_cm_apr_status {
	IB_CM_APR_SUCCESS,
	IB_CM_APR_INVALID_COMM_ID,
	IB_CM_APR_UNSUPPORTED,
	IB_CM_APR_REJECT,
	IB_CM_APR_REDIRECT,
	IB_CM_APR_IS_CURRENT,
	IB_CM_APR_INVALID_QPN_EECN,
	IB_CM_APR_INVALID_LID,
	IB_CM_APR_INVALID_GID,
	IB_CM_APR_INVALID_FLOW_LABEL,
	IB_CM_APR_INVALID_TCLASS,
	IB_CM_APR_INVALID_HOP_LIMIT,
	IB_CM_APR_INVALID_PACKET_RATE,
	IB_CM_APR_INVALID_SL
};

/**
 * enum ib_cm_sidr_status - answer codes of a SIDR_REP.
 * @IB_SIDR_SUCCESS: Resolved; the reply names the QP and Q_Key.
 * @IB_SIDR_UNSUPPORTED: Nobody serves the requested service ID.
 * @IB_SIDR_REJECT: The service refused the request.
 * @IB_SIDR_NO_QP: The service has no QP available.
 * @IB_SIDR_REDIRECT: Ask elsewhere, as the additional information says.
 * @IB_SIDR_UNSUPPORTED_VERSION: The CM class version is unsupported.
 */
enum ib_cm_sidr_status {
	IB_SIDR_SUCCESS,
	IB_SIDR_UNSUPPORTED,
	IB_SIDR_REJECT,
	IB_SIDR_NO_QP,
	IB_SIDR_REDIRECT,
	IB_SIDR_UNSUPPORTED_VERSION
};

struct ib_cm_id;
struct ib_cm_event;

/**
 * typedef ib_cm_handler - a CM user's event callback.
 * @cm_id: The id the event concerns.
 * @event: What happened.  The structure, and everything it points to
 *	(private data, ARI, APR or SIDR information, path records), belongs
 *	to the CM and is valid only until the callback returns; copy what
 *	must be kept.
 *
 * For IB_CM_REQ_RECEIVED and IB_CM_SIDR_REQ_RECEIVED caused by a listen,
 * the CM allocates a new cm_id for the incoming request and hands it over
 * in @cm_id; the listener is in the event's listen_id.  The new id starts
 * with the listener's handler and context, which the callback may replace
 * (rdma_cm does).  From then on the client owns the new id and must
 * destroy it.  For every other event @cm_id is an id the user already
 * holds.
 *
 * The callback must not call ib_destroy_cm_id() on @cm_id: that would wait
 * for the callback itself.  This implementation detects the attempt,
 * warns and refuses it.  Return non-zero instead to have the CM destroy
 * @cm_id once the callback is over; the user must not touch @cm_id after
 * such a return.
 *
 * Context: Process context, on the CM's ordered workqueue; may sleep.
 * Events for one cm_id are delivered one at a time, in arrival order.
 * The callback may call the ib_send_cm_*() functions, ib_prepare_cm_mra(),
 * ib_cm_notify() and ib_cm_init_qp_attr() for @cm_id.
 *
 * Return: 0 to keep @cm_id, non-zero to have the CM destroy it.
 */
typedef int (*ib_cm_handler)(struct ib_cm_id *cm_id,
			     const struct ib_cm_event *event);

/**
 * struct ib_cm_id - the user-visible part of a CM communication identifier.
 * @cm_handler: Callback for this id's events.  The CM reads it anew for
 *	every event, so a handler may switch it (as rdma_cm does while
 *	handling IB_CM_REQ_RECEIVED).
 * @context: Opaque user pointer, never touched by the CM.
 * @device: The RDMA device all of this id's traffic uses.
 * @service_id: Service ID being listened on, requested or connected to
 *	(big-endian).
 * @state: Protocol state (&enum ib_cm_state), maintained by the CM.
 * @lap_state: Alternate path state (&enum ib_cm_lap_state), maintained by
 *	the CM.
 * @local_id: Our communication ID, as carried in the MADs (big-endian).
 * @remote_id: The peer's communication ID, once known (big-endian).
 * @remote_cm_qpn: QP number to which CM MADs for the peer are sent: 1
 *	(the GSI QP) unless a REJ with IB_CM_REJ_PORT_CM_REDIRECT told the
 *	user otherwise; the user may then write it.
 *
 * Allocated by ib_create_cm_id(), ib_cm_insert_listen() or the CM (for an
 * incoming request), and freed only through ib_destroy_cm_id() or a
 * non-zero return from the handler.
 */
struct ib_cm_id {
	ib_cm_handler		cm_handler;
	void			*context;
	struct ib_device	*device;
	__be64			service_id;
	enum ib_cm_state	state;
	enum ib_cm_lap_state	lap_state;
	__be32			local_id;
	__be32			remote_id;
	u32			remote_cm_qpn;
};

/**
 * struct ib_cm_req_event_param - contents of a received REQ.
 * @listen_id: The listening id whose service ID the REQ matched.
 * @bth_pkey: P_Key found in the BTH of the packet that carried the REQ.
 * @port: Local port number the REQ arrived on.
 * @primary_path: Primary path, as seen from our side.
 * @alternate_path: Alternate path, or NULL if the REQ offers none.
 * @ppath_sgid_attr: Local GID attribute for @primary_path, if the CM
 *	resolved one (RoCE); NULL otherwise.  Alternate paths carry none.
 * @remote_ca_guid: GUID of the peer's channel adapter (big-endian).
 * @remote_qkey: The peer's Q_Key (datagram transports).
 * @remote_qpn: The peer's QP number.
 * @qp_type: Transport the peer asks for.
 * @starting_psn: First packet sequence number the peer will send.
 * @responder_resources: RDMA read/atomic requests we may have
 *	outstanding towards the peer.
 * @initiator_depth: RDMA read/atomic requests the peer may have
 *	outstanding towards us.
 * @local_cm_response_timeout: How long the peer may take to answer our
 *	CM messages (IBTA 5-bit timeout encoding: 4.096 us * 2^value).
 * @flow_control: Set if the peer supports end-to-end flow control.
 * @remote_cm_response_timeout: How long the peer expects us to take to
 *	answer its REQ (same encoding).
 * @retry_count: Transport retry count requested for the connection.
 * @rnr_retry_count: RNR NAK retry count requested for the connection.
 * @srq: Set if the peer's QP uses a shared receive queue.
 * @ece: Enhanced connection establishment options of the peer.
 *
 * The four bitfields after @initiator_depth share its 32-bit storage unit;
 * @rnr_retry_count and @srq start the next one.
 */
struct ib_cm_req_event_param {
	struct ib_cm_id		*listen_id;
	u16			bth_pkey;
	u8			port;
	struct sa_path_rec	*primary_path;
	struct sa_path_rec	*alternate_path;
	const struct ib_gid_attr *ppath_sgid_attr;
	__be64			remote_ca_guid;
	u32			remote_qkey;
	u32			remote_qpn;
	enum ib_qp_type		qp_type;
	u32			starting_psn;
	u8			responder_resources;
	u8			initiator_depth;
	unsigned int		local_cm_response_timeout:5;
	unsigned int		flow_control:1;
	unsigned int		remote_cm_response_timeout:5;
	unsigned int		retry_count:3;
	unsigned int		rnr_retry_count:3;
	unsigned int		srq:1;
	struct rdma_ucm_ece	ece;
};

/**
 * struct ib_cm_rep_event_param - contents of a received REP.
 * @remote_ca_guid: GUID of the peer's channel adapter (big-endian).
 * @remote_qkey: The peer's Q_Key (datagram transports).
 * @remote_qpn: The peer's QP number.
 * @starting_psn: First packet sequence number the peer will send.
 * @responder_resources: RDMA read/atomic requests we may have
 *	outstanding towards the peer.
 * @initiator_depth: RDMA read/atomic requests the peer may have
 *	outstanding towards us.
 * @target_ack_delay: The peer's ACK delay (IBTA 5-bit timeout encoding).
 * @failover_accepted: The peer's answer to the alternate path of our REQ
 *	(0 accepted, 1 refused, 2 unsupported).
 * @flow_control: Set if the peer supports end-to-end flow control.
 * @rnr_retry_count: RNR NAK retry count the peer asks us to use.
 * @srq: Set if the peer's QP uses a shared receive queue.
 * @ece: Enhanced connection establishment options of the peer.
 *
 * All bitfields share the 32-bit storage unit of @responder_resources.
 */
struct ib_cm_rep_event_param {
	__be64			remote_ca_guid;
	u32			remote_qkey;
	u32			remote_qpn;
	u32			starting_psn;
	u8			responder_resources;
	u8			initiator_depth;
	unsigned int		target_ack_delay:5;
	unsigned int		failover_accepted:2;
	unsigned int		flow_control:1;
	unsigned int		rnr_retry_count:3;
	unsigned int		srq:1;
	struct rdma_ucm_ece	ece;
};

/**
 * struct ib_cm_rej_event_param - contents of a received REJ.
 * @reason: Why the connection was refused.
 * @ari: Additional rejection information, @ari_length bytes; its meaning
 *	depends on @reason.
 * @ari_length: Number of valid bytes at @ari.
 */
struct ib_cm_rej_event_param {
	enum ib_cm_rej_reason	reason;
	void			*ari;
	u8			ari_length;
};

/**
 * struct ib_cm_mra_event_param - contents of a received MRA.
 * @service_timeout: Extra time the peer asks for (IBTA 5-bit timeout
 *	encoding).
 */
struct ib_cm_mra_event_param {
	u8	service_timeout;
};

/**
 * struct ib_cm_lap_event_param - contents of a received LAP.
 * @alternate_path: The alternate path the peer proposes.
 */
struct ib_cm_lap_event_param {
	struct sa_path_rec	*alternate_path;
};

/**
 * struct ib_cm_apr_event_param - contents of a received APR.
 * @ap_status: The peer's verdict on our LAP.
 * @apr_info: Additional information, @info_len bytes.
 * @info_len: Number of valid bytes at @apr_info.
 */
struct ib_cm_apr_event_param {
	enum ib_cm_apr_status	ap_status;
	void			*apr_info;
	u8			info_len;
};

/**
 * struct ib_cm_sidr_req_event_param - contents of a received SIDR_REQ.
 * @listen_id: The listening id whose service ID the request matched.
 * @service_id: Service ID being resolved (big-endian).
 * @sgid_attr: Local GID attribute the request arrived on, if the CM
 *	resolved one (RoCE); NULL otherwise.
 * @bth_pkey: P_Key found in the BTH of the packet that carried the request.
 * @port: Local port number the request arrived on.
 * @pkey: P_Key field of the SIDR_REQ itself.
 */
struct ib_cm_sidr_req_event_param {
	struct ib_cm_id		*listen_id;
	__be64			service_id;
	const struct ib_gid_attr *sgid_attr;
	u16			bth_pkey;
	u8			port;
	u16			pkey;
};

/**
 * struct ib_cm_sidr_rep_event_param - contents of a received SIDR_REP.
 * @status: The peer's answer.
 * @qkey: Q_Key to use with the service's QP.
 * @qpn: The service's QP number.
 * @info: Additional information, @info_len bytes (redirection data).
 * @sgid_attr: Local GID attribute used for the request, if any.
 * @info_len: Number of valid bytes at @info.
 */
struct ib_cm_sidr_rep_event_param {
	enum ib_cm_sidr_status	status;
	u32			qkey;
	u32			qpn;
	void			*info;
	const struct ib_gid_attr *sgid_attr;
	u8			info_len;
};

/**
 * struct ib_cm_event - one event passed to an ib_cm_handler.
 * @event: Which event this is; selects the valid member of @param.
 * @param: Event details.  RTU, DREQ, DREP and TIMEWAIT_EXIT events carry
 *	none.
 * @param.req_rcvd: For IB_CM_REQ_RECEIVED.
 * @param.rep_rcvd: For IB_CM_REP_RECEIVED.
 * @param.rej_rcvd: For IB_CM_REJ_RECEIVED.
 * @param.mra_rcvd: For IB_CM_MRA_RECEIVED.
 * @param.lap_rcvd: For IB_CM_LAP_RECEIVED.
 * @param.apr_rcvd: For IB_CM_APR_RECEIVED.
 * @param.sidr_req_rcvd: For IB_CM_SIDR_REQ_RECEIVED.
 * @param.sidr_rep_rcvd: For IB_CM_SIDR_REP_RECEIVED.
 * @param.send_status: For the *_ERROR events: the completion status of
 *	the send that failed.
 * @private_data: The user data of the message that caused the event, if
 *	it carries any (its size is given by &enum ib_cm_data_size); NULL
 *	otherwise.
 *
 * Owned by the CM.  Neither the structure nor any buffer it points to
 * outlives the callback.
 */
struct ib_cm_event {
	enum ib_cm_event_type	event;
	union {
		struct ib_cm_req_event_param	req_rcvd;
		struct ib_cm_rep_event_param	rep_rcvd;
		struct ib_cm_rej_event_param	rej_rcvd;
		struct ib_cm_mra_event_param	mra_rcvd;
		struct ib_cm_lap_event_param	lap_rcvd;
		struct ib_cm_apr_event_param	apr_rcvd;
		struct ib_cm_sidr_req_event_param sidr_req_rcvd;
		struct ib_cm_sidr_rep_event_param sidr_rep_rcvd;
		enum ib_wc_status		send_status;
	} param;
	void			*private_data;
};

/**
 * struct ib_cm_req_param - what ib_send_cm_req() puts into a REQ.
 * @primary_path: Primary path to the peer.  Required.
 * @primary_path_inbound: Inbound half of the primary path when the two
 *	directions differ; NULL otherwise.
 * @primary_path_outbound: Outbound half of the primary path when the two
 *	directions differ; NULL otherwise.
 * @alternate_path: Alternate path for automatic path migration, or NULL.
 * @ppath_sgid_attr: Local GID attribute to send from on @primary_path
 *	(RoCE); may be NULL on InfiniBand.
 * @service_id: Service ID to connect to (big-endian).
 * @qp_num: Number of the local QP to connect.
 * @qp_type: Transport of that QP (IB_QPT_RC, IB_QPT_UC or IB_QPT_XRC_INI).
 * @starting_psn: First packet sequence number we will send.
 * @private_data: User data for the REQ, or NULL.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_REQ_PRIVATE_DATA_SIZE.
 * @responder_resources: RDMA read/atomic requests the peer may have
 *	outstanding towards us.
 * @initiator_depth: RDMA read/atomic requests we want outstanding towards
 *	the peer.
 * @remote_cm_response_timeout: Time we allow the peer to answer the REQ
 *	(IBTA 5-bit timeout encoding).
 * @flow_control: Non-zero if we support end-to-end flow control.
 * @local_cm_response_timeout: Time we will take to answer the peer's CM
 *	messages (same encoding).
 * @retry_count: Transport retry count for the connection (0-7).
 * @rnr_retry_count: RNR NAK retry count for the connection (0-7).
 * @max_cm_retries: How often the CM resends the REQ (and later messages
 *	of this id) before giving up (0-15).
 * @srq: Non-zero if our QP uses a shared receive queue.
 * @ece: Enhanced connection establishment options to offer.
 *
 * Read during the call only; the caller keeps ownership of everything.
 */
struct ib_cm_req_param {
	struct sa_path_rec	*primary_path;
	struct sa_path_rec	*primary_path_inbound;
	struct sa_path_rec	*primary_path_outbound;
	struct sa_path_rec	*alternate_path;
	const struct ib_gid_attr *ppath_sgid_attr;
	__be64			service_id;
	u32			qp_num;
	enum ib_qp_type		qp_type;
	u32			starting_psn;
	const void		*private_data;
	u8			private_data_len;
	u8			responder_resources;
	u8			initiator_depth;
	u8			remote_cm_response_timeout;
	u8			flow_control;
	u8			local_cm_response_timeout;
	u8			retry_count;
	u8			rnr_retry_count;
	u8			max_cm_retries;
	u8			srq;
	struct rdma_ucm_ece	ece;
};

/**
 * struct ib_cm_rep_param - what ib_send_cm_rep() puts into a REP.
 * @qp_num: Number of the local QP to connect.
 * @starting_psn: First packet sequence number we will send.
 * @private_data: User data for the REP, or NULL.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_REP_PRIVATE_DATA_SIZE.
 * @responder_resources: RDMA read/atomic requests the peer may have
 *	outstanding towards us.
 * @initiator_depth: RDMA read/atomic requests we want outstanding towards
 *	the peer.
 * @failover_accepted: Our answer to the REQ's alternate path (0 accept,
 *	1 refuse, 2 unsupported).
 * @flow_control: Non-zero if we support end-to-end flow control.
 * @rnr_retry_count: RNR NAK retry count the peer should use (0-7).
 * @srq: Non-zero if our QP uses a shared receive queue.
 * @ece: Enhanced connection establishment options we accept.
 *
 * Read during the call only; the caller keeps ownership of everything.
 */
struct ib_cm_rep_param {
	u32		qp_num;
	u32		starting_psn;
	const void	*private_data;
	u8		private_data_len;
	u8		responder_resources;
	u8		initiator_depth;
	u8		failover_accepted;
	u8		flow_control;
	u8		rnr_retry_count;
	u8		srq;
	struct rdma_ucm_ece ece;
};

/**
 * struct ib_cm_sidr_req_param - what ib_send_cm_sidr_req() puts into a SIDR_REQ.
 * @path: Path to the node that should resolve the service ID.
 * @sgid_attr: Local GID attribute to send from (RoCE); may be NULL.
 * @service_id: Service ID to resolve (big-endian).
 * @timeout_ms: Time to wait for the SIDR_REP before each resend.
 * @private_data: User data for the SIDR_REQ, or NULL.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE.
 * @max_cm_retries: How often the request is resent before giving up.
 *
 * Read during the call only; the caller keeps ownership of everything.
 */
struct ib_cm_sidr_req_param {
	struct sa_path_rec	*path;
	const struct ib_gid_attr *sgid_attr;
	__be64			service_id;
	unsigned long		timeout_ms;
	const void		*private_data;
	u8			private_data_len;
	u8			max_cm_retries;
};

/**
 * struct ib_cm_sidr_rep_param - what ib_send_cm_sidr_rep() puts into a SIDR_REP.
 * @qp_num: QP number that serves the service ID.
 * @qkey: Q_Key of that QP.
 * @status: The answer.
 * @info: Additional information (for redirection), or NULL.
 * @info_length: Bytes at @info; at most IB_CM_SIDR_REP_INFO_LENGTH.
 * @private_data: User data for the SIDR_REP, or NULL.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_SIDR_REP_PRIVATE_DATA_SIZE.
 * @ece: Enhanced connection establishment options we accept.
 *
 * Read during the call only; the caller keeps ownership of everything.
 */
struct ib_cm_sidr_rep_param {
	u32			qp_num;
	u32			qkey;
	enum ib_cm_sidr_status	status;
	const void		*info;
	u8			info_length;
	const void		*private_data;
	u8			private_data_len;
	struct rdma_ucm_ece	ece;
};

/**
 * ib_create_cm_id() - allocate a communication identifier.
 * @device: RDMA device on which all of the id's communication happens.
 * @cm_handler: Callback that receives the id's events.
 * @context: Opaque pointer stored in the id's @context member.
 *
 * The new id is in state IB_CM_IDLE, ready for ib_cm_listen(),
 * ib_send_cm_req() or ib_send_cm_sidr_req().  The caller owns it and must
 * release it with ib_destroy_cm_id().
 *
 * Context: Process context; may sleep.  May be called from a CM handler.
 * Return: The new id, or an ERR_PTR() (such as ERR_PTR(-ENOMEM)) on
 * failure; never NULL.
 */
struct ib_cm_id *ib_create_cm_id(struct ib_device *device,
				 ib_cm_handler cm_handler,
				 void *context);

/**
 * ib_destroy_cm_id() - release a communication identifier.
 * @cm_id: The id to release.
 *
 * Whatever state the id is in, the CM winds it down: a pending request is
 * cancelled, a connection being set up is refused with a REJ, an
 * established connection is closed with a DREQ, and a listener stops
 * listening (a shared one from ib_cm_insert_listen() only when its last
 * user releases it).  Outstanding sends are cancelled and the call waits
 * until no callback for @cm_id is running or can start any more.  After
 * it returns, @cm_id must not be used.
 *
 * Context: Process context; sleeps.  Must not be called from @cm_id's own
 * handler (return non-zero from the handler instead); this implementation
 * warns and ignores such a call.  Destroying other ids from a handler is
 * allowed.
 */
void ib_destroy_cm_id(struct ib_cm_id *cm_id);

/**
 * ib_cm_listen() - accept requests for a service ID.
 * @cm_id: An idle id, from ib_create_cm_id().
 * @service_id: Service ID (big-endian) matched exactly against incoming
 *	REQs and SIDR_REQs.  IB_CM_ASSIGN_SERVICE_ID asks the CM to assign
 *	an unused ID from its own range; the result is then found in
 *	@cm_id->service_id.
 *
 * On success the id moves to IB_CM_LISTEN, and each matching request
 * produces an IB_CM_REQ_RECEIVED or IB_CM_SIDR_REQ_RECEIVED event on a new
 * id, delivered to @cm_id's handler.
 *
 * Context: Process context; may sleep.  Not from @cm_id's own handler.
 * Return: 0 on success; -EINVAL if @cm_id is not idle or @service_id lies
 * in the CM's own range without being IB_CM_ASSIGN_SERVICE_ID; -EBUSY if
 * another id already listens on @service_id on the same device.
 */
int ib_cm_listen(struct ib_cm_id *cm_id, __be64 service_id);

/**
 * ib_cm_insert_listen() - find or create a shared listener.
 * @device: RDMA device to listen on.
 * @cm_handler: Callback for the listener's events.
 * @service_id: Service ID (big-endian) to listen on.
 *
 * If an id already listens on @service_id on @device with the same
 * @cm_handler and a NULL context, it is shared: its use count goes up and
 * it is returned.
 * Otherwise a new listening id is created with a NULL context.  Each
 * successful call must be balanced by one ib_destroy_cm_id() on the
 * returned id; the listener goes away with its last user.
 *
 * Context: Process context; may sleep.
 * Return: The listening id; ERR_PTR(-EINVAL) if @service_id is already
 * taken by a listener with another handler or a context (as made by
 * ib_cm_listen()), or lies in the CM's own range; ERR_PTR(-ENOMEM) if a
 * new id cannot be allocated.
 */
struct ib_cm_id *ib_cm_insert_listen(struct ib_device *device,
				     ib_cm_handler cm_handler,
				     __be64 service_id);

/**
 * ib_send_cm_req() - start a connection: send a REQ.
 * @cm_id: An idle id, from ib_create_cm_id().
 * @param: What to request.  Read during the call only.
 *
 * The id moves to IB_CM_REQ_SENT.  The REQ is resent until answered;
 * the outcome arrives as IB_CM_REP_RECEIVED, IB_CM_REJ_RECEIVED or
 * IB_CM_REQ_ERROR.
 *
 * Context: Process context; may sleep.  May be called from a CM handler.
 * Return: 0 if the REQ is on its way; -EINVAL if @cm_id is not idle or
 * @param is unusable (private data too long, bad path); -ENOMEM; or an
 * error from the MAD layer.
 */
int ib_send_cm_req(struct ib_cm_id *cm_id,
		   struct ib_cm_req_param *param);

/**
 * ib_send_cm_rep() - accept a connection request: send a REP.
 * @cm_id: The id delivered with IB_CM_REQ_RECEIVED, in state
 *	IB_CM_REQ_RCVD or IB_CM_MRA_REQ_SENT.
 * @param: What to reply.  Read during the call only.
 *
 * The id moves to IB_CM_REP_SENT; the peer's RTU completes the connection
 * (IB_CM_RTU_RECEIVED), or IB_CM_REP_ERROR reports that it never came.
 *
 * Context: Any context; does not sleep.  May be called from @cm_id's
 * handler.
 * Return: 0 if the REP is on its way; -EINVAL in the wrong state or with
 * too much private data; -ENOMEM; or an error from the MAD layer.
 */
int ib_send_cm_rep(struct ib_cm_id *cm_id,
		   struct ib_cm_rep_param *param);

/**
 * ib_send_cm_rtu() - complete a connection: send an RTU.
 * @cm_id: The id that got IB_CM_REP_RECEIVED, in state IB_CM_REP_RCVD or
 *	IB_CM_MRA_REP_SENT.
 * @private_data: User data for the RTU, or NULL.  Read during the call
 *	only.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_RTU_PRIVATE_DATA_SIZE.
 *
 * The id moves to IB_CM_ESTABLISHED.
 *
 * Context: Process context.  This implementation does not sleep here,
 * but callers that may also run on the stock module must assume that
 * it may.  May be called from @cm_id's handler.
 * Return: 0 on success; -EINVAL in the wrong state or with too much
 * private data; -ENOMEM; or an error from the MAD layer.
 */
int ib_send_cm_rtu(struct ib_cm_id *cm_id,
		   const void *private_data,
		   u8 private_data_len);

/**
 * ib_send_cm_dreq() - start a disconnection: send a DREQ.
 * @cm_id: An established id.
 * @private_data: User data for the DREQ, or NULL.  Read during the call
 *	only.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_DREQ_PRIVATE_DATA_SIZE.
 *
 * The id moves to IB_CM_DREQ_SENT; IB_CM_DREP_RECEIVED or
 * IB_CM_DREQ_ERROR follows.  If the DREQ cannot be sent at all, the id
 * goes straight to IB_CM_TIMEWAIT and the error is returned.
 *
 * Context: Any context; does not sleep.  May be called from @cm_id's
 * handler.
 * Return: 0 on success; -EINVAL if @cm_id is not established or the
 * private data is too long; -ENOMEM; or an error from the MAD layer.
 */
int ib_send_cm_dreq(struct ib_cm_id *cm_id,
		    const void *private_data,
		    u8 private_data_len);

/**
 * ib_send_cm_drep() - answer a disconnection request: send a DREP.
 * @cm_id: The id that got IB_CM_DREQ_RECEIVED.
 * @private_data: User data for the DREP, or NULL.  Read during the call
 *	only.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_DREP_PRIVATE_DATA_SIZE.
 *
 * In state IB_CM_DREQ_RCVD the id moves to IB_CM_TIMEWAIT, even when the
 * DREP itself cannot be sent.
 *
 * Context: Process context.  This implementation does not sleep here,
 * but callers that may also run on the stock module must assume that
 * it may.  May be called from @cm_id's handler.
 * Return: 0 on success; -EINVAL in the wrong state or with too much
 * private data; -ENOMEM; or an error from the MAD layer.
 */
int ib_send_cm_drep(struct ib_cm_id *cm_id,
		    const void *private_data,
		    u8 private_data_len);

/**
 * ib_cm_notify() - tell the CM about a QP event that concerns it.
 * @cm_id: The id of the connection the QP belongs to.
 * @event: The QP's asynchronous event.  Two are understood:
 *	IB_EVENT_COMM_EST, a message arrived on the QP before the RTU did
 *	(the id becomes established and its handler gets
 *	IB_CM_USER_ESTABLISHED); IB_EVENT_PATH_MIG, the QP has moved to its
 *	alternate path (the CM sends on the alternate path from now on).
 *
 * A user passes on the QP events that the CM cannot see by itself.
 * IB_EVENT_COMM_EST matters on the passive side: when the peer starts
 * sending before its RTU arrives (or the RTU is lost), the connection is
 * established all the same; the event is delivered on the CM's
 * workqueue, never from within this call.  IB_EVENT_PATH_MIG swaps the
 * primary and alternate paths the CM uses for its own messages.
 *
 * Context: Any context, including a QP event handler running in atomic
 * context; does not sleep.
 * Return: 0 on success; -EISCONN if IB_EVENT_COMM_EST arrives on an
 * already established id; -EINVAL for any other event, for
 * IB_EVENT_COMM_EST before our REP was sent, and for IB_EVENT_PATH_MIG
 * unless the id is established with no LAP exchange under way; -ENOMEM
 * if the event cannot be queued.
 */
int ib_cm_notify(struct ib_cm_id *cm_id, enum ib_event_type event);

/**
 * ib_send_cm_rej() - refuse a connection: send a REJ.
 * @cm_id: An id in connection setup (a request sent or received, a reply
 *	sent or received, or an MRA for one of them).
 * @reason: Why the connection is refused.
 * @ari: Additional rejection information, or NULL.  Read during the call
 *	only.
 * @ari_length: Bytes at @ari; at most IB_CM_REJ_ARI_LENGTH.
 * @private_data: User data for the REJ, or NULL.  Read during the call
 *	only.
 * @private_data_len: Bytes at @private_data; at most
 *	IB_CM_REJ_PRIVATE_DATA_SIZE.
 *
 * The id returns to IB_CM_IDLE, or enters IB_CM_TIMEWAIT if our REP was
 * already out.
 *
 * Context: Any context; does not sleep.  May be called from @cm_id's
 * handler.
 * Return: 0 on success; -EINVAL in the wrong state or with too long ARI
 * or private data; -ENOMEM; or an error from the MAD layer.
 */
int ib_send_cm_rej(struct ib_cm_id *cm_id,
		   enum ib_cm_rej_reason reason,
		   void *ari,
		   u8 ari_length,
		   const void *private_data,
		   u8 private_data_len);

/**
 * ib_prepare_cm_mra() - ask for more time before answering.
 * @cm_id: An id that has received a REQ, a REP or a LAP and not answered it.
 *
 * Marks @cm_id as needing more time to answer the pending message.  No
 * MRA is sent by this call: from now on the CM answers each resent copy
 * of that message with an MRA carrying a service timeout of about 69
 * seconds, so that the peer keeps waiting while the user prepares the
 * real answer.  The state changes from IB_CM_REQ_RCVD to
 * IB_CM_MRA_REQ_SENT or from IB_CM_REP_RCVD to IB_CM_MRA_REP_SENT, and the
 * LAP state of an established id from IB_CM_LAP_RCVD to
 * IB_CM_MRA_LAP_SENT.
 *
 * Context: Any context; does not sleep.  May be called from @cm_id's
 * handler.
 * Return: 0 on success; -EINVAL if @cm_id is in none of those states
 * (including when it is already marked).
 */
int ib_prepare_cm_mra(struct ib_cm_id *cm_id);

/**
 * ib_cm_init_qp_attr() - fill in QP attributes for the next QP transition.
 * @cm_id: The id of the connection the QP belongs to.
 * @qp_attr: On entry @qp_attr->qp_state names the target state: IB_QPS_INIT,
 *	IB_QPS_RTR or IB_QPS_RTS.  On return the attributes that transition
 *	needs, and those the CM knows from the connection, are set.
 * @qp_attr_mask: Set on return to the IB_QP_* flags of the attributes
 *	written.
 *
 * The caller may adjust the result before passing both to ib_modify_qp().
 *
 * Context: Any context; does not sleep.  May be called from @cm_id's
 * handler.
 * Return: 0 on success; -EINVAL if the target state is not one of the
 * three above or the connection has not progressed far enough for it.
 */
int ib_cm_init_qp_attr(struct ib_cm_id *cm_id,
		       struct ib_qp_attr *qp_attr,
		       int *qp_attr_mask);

/**
 * ib_send_cm_sidr_req() - resolve a service ID: send a SIDR_REQ.
 * @cm_id: An idle id, from ib_create_cm_id().
 * @param: What to ask.  Read during the call only.
 *
 * The id moves to IB_CM_SIDR_REQ_SENT; IB_CM_SIDR_REP_RECEIVED or
 * IB_CM_SIDR_REQ_ERROR follows.
 *
 * Context: Process context; may sleep.  May be called from a CM handler.
 * Return: 0 if the request is on its way; -EINVAL if @cm_id is not idle
 * or @param is unusable; -ENOMEM; or an error from the MAD layer.
 */
int ib_send_cm_sidr_req(struct ib_cm_id *cm_id,
			struct ib_cm_sidr_req_param *param);

/**
 * ib_send_cm_sidr_rep() - answer a service ID resolution request.
 * @cm_id: The id delivered with IB_CM_SIDR_REQ_RECEIVED.
 * @param: The answer.  Read during the call only.
 *
 * Afterwards @cm_id has served its purpose; the user still destroys it.
 * If the answer could not be sent, @cm_id still waits for one: the call
 * may be repeated, and destroying @cm_id answers with IB_SIDR_REJECT.
 *
 * Context: Any context; does not sleep.  May be called from @cm_id's
 * handler.
 * Return: 0 on success; -EINVAL in the wrong state or with too long
 * information or private data; -ENOMEM; or an error from the MAD layer.
 */
int ib_send_cm_sidr_rep(struct ib_cm_id *cm_id,
			struct ib_cm_sidr_rep_param *param);

/**
 * ibcm_reject_msg() - describe a REJ reason code.
 * @reason: A reason code, normally an &enum ib_cm_rej_reason from
 *	&struct ib_cm_rej_event_param.
 *
 * Turns the reason of a REJ into a short English phrase for log messages
 * (rdma_cm uses it to describe rejected connections).  Codes outside
 * &enum ib_cm_rej_reason, including the unused value 34, are accepted.
 *
 * Context: Any context.
 * Return: A static string naming @reason, or a generic one for codes it
 * does not know; never NULL, never to be freed.
 */
const char *__attribute_const__ ibcm_reject_msg(int reason);

#endif /* IB_CM_H */

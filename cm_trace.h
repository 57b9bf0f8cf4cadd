/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the InfiniBand Communication Manager.
 *
 * The system and event names are those of the stock module, so that
 * existing "perf trace -e ib_cma:icm_*" and BPF scripts keep working.
 * Communication IDs are recorded in host byte order.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ib_cma

#ifndef _IB_CM_CAUSE_H
#define _IB_CM_CAUSE_H
/*
 * Why the state of an id changes, in the IBTA's terms: a message sent by
 * an API call or received, a timer, a notification, or the CM itself
 * (CM_STALE_CONN: it disconnects a connection whose remote QP was reused;
 * CM_DROP: it drops a new id before handing it over).  cm.c's transition
 * tables are written in these, and icm_state records them.
 */
enum cm_cause {
	CM_LISTEN,
	CM_SEND_REQ,
	CM_RECV_REQ,
	CM_RECV_MRA,
	CM_PREPARE_MRA,
	CM_SEND_REJ,
	CM_RECV_REJ,
	CM_SEND_REP,
	CM_RECV_REP,
	CM_SEND_RTU,
	CM_RECV_RTU,
	CM_COMM_EST,
	CM_SEND_DREQ,
	CM_RECV_DREQ,
	CM_STALE_CONN,
	CM_SEND_DREP,
	CM_RECV_DREP,
	CM_SEND_SIDR_REQ,
	CM_RECV_SIDR_REQ,
	CM_SEND_SIDR_REP,
	CM_RECV_SIDR_REP,
	CM_RECV_LAP,
	CM_RECV_APR,
	CM_PATH_MIG,
	CM_TIMEOUT,
	CM_TIMEWAIT_END,
	CM_DROP,
	CM_DESTROY,
	CM_CAUSES
};
#endif /* _IB_CM_CAUSE_H */

#if !defined(_IB_CM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IB_CM_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>

/* The values behind the names below, for perf and trace-cmd. */
TRACE_DEFINE_ENUM(IB_CM_IDLE);
TRACE_DEFINE_ENUM(IB_CM_LISTEN);
TRACE_DEFINE_ENUM(IB_CM_REQ_SENT);
TRACE_DEFINE_ENUM(IB_CM_REQ_RCVD);
TRACE_DEFINE_ENUM(IB_CM_MRA_REQ_SENT);
TRACE_DEFINE_ENUM(IB_CM_MRA_REQ_RCVD);
TRACE_DEFINE_ENUM(IB_CM_REP_SENT);
TRACE_DEFINE_ENUM(IB_CM_REP_RCVD);
TRACE_DEFINE_ENUM(IB_CM_MRA_REP_SENT);
TRACE_DEFINE_ENUM(IB_CM_MRA_REP_RCVD);
TRACE_DEFINE_ENUM(IB_CM_ESTABLISHED);
TRACE_DEFINE_ENUM(IB_CM_DREQ_SENT);
TRACE_DEFINE_ENUM(IB_CM_DREQ_RCVD);
TRACE_DEFINE_ENUM(IB_CM_TIMEWAIT);
TRACE_DEFINE_ENUM(IB_CM_SIDR_REQ_SENT);
TRACE_DEFINE_ENUM(IB_CM_SIDR_REQ_RCVD);
TRACE_DEFINE_ENUM(IB_CM_LAP_UNINIT);
TRACE_DEFINE_ENUM(IB_CM_LAP_IDLE);
TRACE_DEFINE_ENUM(IB_CM_LAP_SENT);
TRACE_DEFINE_ENUM(IB_CM_LAP_RCVD);
TRACE_DEFINE_ENUM(IB_CM_MRA_LAP_SENT);
TRACE_DEFINE_ENUM(IB_CM_MRA_LAP_RCVD);
TRACE_DEFINE_ENUM(CM_LISTEN);
TRACE_DEFINE_ENUM(CM_SEND_REQ);
TRACE_DEFINE_ENUM(CM_RECV_REQ);
TRACE_DEFINE_ENUM(CM_RECV_MRA);
TRACE_DEFINE_ENUM(CM_PREPARE_MRA);
TRACE_DEFINE_ENUM(CM_SEND_REJ);
TRACE_DEFINE_ENUM(CM_RECV_REJ);
TRACE_DEFINE_ENUM(CM_SEND_REP);
TRACE_DEFINE_ENUM(CM_RECV_REP);
TRACE_DEFINE_ENUM(CM_SEND_RTU);
TRACE_DEFINE_ENUM(CM_RECV_RTU);
TRACE_DEFINE_ENUM(CM_COMM_EST);
TRACE_DEFINE_ENUM(CM_SEND_DREQ);
TRACE_DEFINE_ENUM(CM_RECV_DREQ);
TRACE_DEFINE_ENUM(CM_STALE_CONN);
TRACE_DEFINE_ENUM(CM_SEND_DREP);
TRACE_DEFINE_ENUM(CM_RECV_DREP);
TRACE_DEFINE_ENUM(CM_SEND_SIDR_REQ);
TRACE_DEFINE_ENUM(CM_RECV_SIDR_REQ);
TRACE_DEFINE_ENUM(CM_SEND_SIDR_REP);
TRACE_DEFINE_ENUM(CM_RECV_SIDR_REP);
TRACE_DEFINE_ENUM(CM_RECV_LAP);
TRACE_DEFINE_ENUM(CM_RECV_APR);
TRACE_DEFINE_ENUM(CM_PATH_MIG);
TRACE_DEFINE_ENUM(CM_TIMEOUT);
TRACE_DEFINE_ENUM(CM_TIMEWAIT_END);
TRACE_DEFINE_ENUM(CM_DROP);
TRACE_DEFINE_ENUM(CM_DESTROY);

#define cm_trace_state_name(s)						\
	__print_symbolic(s,						\
		{ IB_CM_IDLE, "IDLE" },					\
		{ IB_CM_LISTEN, "LISTEN" },				\
		{ IB_CM_REQ_SENT, "REQ_SENT" },				\
		{ IB_CM_REQ_RCVD, "REQ_RCVD" },				\
		{ IB_CM_MRA_REQ_SENT, "MRA_REQ_SENT" },			\
		{ IB_CM_MRA_REQ_RCVD, "MRA_REQ_RCVD" },			\
		{ IB_CM_REP_SENT, "REP_SENT" },				\
		{ IB_CM_REP_RCVD, "REP_RCVD" },				\
		{ IB_CM_MRA_REP_SENT, "MRA_REP_SENT" },			\
		{ IB_CM_MRA_REP_RCVD, "MRA_REP_RCVD" },			\
		{ IB_CM_ESTABLISHED, "ESTABLISHED" },			\
		{ IB_CM_DREQ_SENT, "DREQ_SENT" },			\
		{ IB_CM_DREQ_RCVD, "DREQ_RCVD" },			\
		{ IB_CM_TIMEWAIT, "TIMEWAIT" },				\
		{ IB_CM_SIDR_REQ_SENT, "SIDR_REQ_SENT" },		\
		{ IB_CM_SIDR_REQ_RCVD, "SIDR_REQ_RCVD" })

#define cm_trace_lap_state_name(s)					\
	__print_symbolic(s,						\
		{ IB_CM_LAP_UNINIT, "LAP_UNINIT" },			\
		{ IB_CM_LAP_IDLE, "LAP_IDLE" },				\
		{ IB_CM_LAP_SENT, "LAP_SENT" },				\
		{ IB_CM_LAP_RCVD, "LAP_RCVD" },				\
		{ IB_CM_MRA_LAP_SENT, "MRA_LAP_SENT" },			\
		{ IB_CM_MRA_LAP_RCVD, "MRA_LAP_RCVD" })

#define cm_trace_cause_name(c)						\
	__print_symbolic(c,						\
		{ CM_LISTEN, "LISTEN" },				\
		{ CM_SEND_REQ, "SEND_REQ" },				\
		{ CM_RECV_REQ, "RECV_REQ" },				\
		{ CM_RECV_MRA, "RECV_MRA" },				\
		{ CM_PREPARE_MRA, "PREPARE_MRA" },			\
		{ CM_SEND_REJ, "SEND_REJ" },				\
		{ CM_RECV_REJ, "RECV_REJ" },				\
		{ CM_SEND_REP, "SEND_REP" },				\
		{ CM_RECV_REP, "RECV_REP" },				\
		{ CM_SEND_RTU, "SEND_RTU" },				\
		{ CM_RECV_RTU, "RECV_RTU" },				\
		{ CM_COMM_EST, "COMM_EST" },				\
		{ CM_SEND_DREQ, "SEND_DREQ" },				\
		{ CM_RECV_DREQ, "RECV_DREQ" },				\
		{ CM_STALE_CONN, "STALE_CONN" },			\
		{ CM_SEND_DREP, "SEND_DREP" },				\
		{ CM_RECV_DREP, "RECV_DREP" },				\
		{ CM_SEND_SIDR_REQ, "SEND_SIDR_REQ" },			\
		{ CM_RECV_SIDR_REQ, "RECV_SIDR_REQ" },			\
		{ CM_SEND_SIDR_REP, "SEND_SIDR_REP" },			\
		{ CM_RECV_SIDR_REP, "RECV_SIDR_REP" },			\
		{ CM_RECV_LAP, "RECV_LAP" },				\
		{ CM_RECV_APR, "RECV_APR" },				\
		{ CM_PATH_MIG, "PATH_MIG" },				\
		{ CM_TIMEOUT, "TIMEOUT" },				\
		{ CM_TIMEWAIT_END, "TIMEWAIT_END" },			\
		{ CM_DROP, "DROP" },					\
		{ CM_DESTROY, "DESTROY" })

/* Every change of an id's state or lap_state, with its cause. */
TRACE_EVENT(icm_state,
	    TP_PROTO(const struct ib_cm_id *cm_id, bool lap, unsigned int from,
		     unsigned int to, enum cm_cause cause),
	    TP_ARGS(cm_id, lap, from, to, cause),

	    TP_STRUCT__entry(__field(u32, local_id)
			     __field(u32, remote_id)
			     __field(bool, lap)
			     __field(u8, from)
			     __field(u8, to)
			     __field(u8, cause)),

	    TP_fast_assign(__entry->local_id = be32_to_cpu(cm_id->local_id);
			   __entry->remote_id = be32_to_cpu(cm_id->remote_id);
			   __entry->lap = lap;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->cause = cause;),

	    TP_printk("local_id=%u remote_id=%u %s %s -> %s cause=%s",
		      __entry->local_id, __entry->remote_id,
		      __entry->lap ? "lap_state" : "state",
		      __entry->lap ? cm_trace_lap_state_name(__entry->from) :
				     cm_trace_state_name(__entry->from),
		      __entry->lap ? cm_trace_lap_state_name(__entry->to) :
				     cm_trace_state_name(__entry->to),
		      cm_trace_cause_name(__entry->cause))
);

/* Events about one cm_id; the id may be NULL when none was found. */
DECLARE_EVENT_CLASS(icm_id_class,
		    TP_PROTO(const struct ib_cm_id *cm_id),
		    TP_ARGS(cm_id),

		    TP_STRUCT__entry(__field(const void *, cm_id)
				     __field(unsigned int, local_id)
				     __field(unsigned int, remote_id)
				     __field(unsigned long, state)
				     __field(unsigned long, lap_state)),

		    TP_fast_assign(__entry->cm_id = cm_id;
				   __entry->local_id = cm_id ? be32_to_cpu(cm_id->local_id) : 0;
				   __entry->remote_id = cm_id ? be32_to_cpu(cm_id->remote_id) : 0;
				   __entry->state = cm_id ? cm_id->state : IB_CM_IDLE;
				   __entry->lap_state = cm_id ? cm_id->lap_state : 0;),

		    TP_printk("local_id=%u remote_id=%u state=%s lap_state=%lu",
			      __entry->local_id, __entry->remote_id,
			      cm_trace_state_name(__entry->state), __entry->lap_state)
);

#define ICM_ID_EVENT(name)						\
	DEFINE_EVENT(icm_id_class, name,				\
		TP_PROTO(const struct ib_cm_id *cm_id),			\
		TP_ARGS(cm_id))

/* Messages sent for an id. */
ICM_ID_EVENT(icm_send_req);
ICM_ID_EVENT(icm_send_rep);
ICM_ID_EVENT(icm_send_dup_req);
ICM_ID_EVENT(icm_send_dup_rep);
ICM_ID_EVENT(icm_send_rtu);
ICM_ID_EVENT(icm_send_mra);
ICM_ID_EVENT(icm_send_sidr_req);
ICM_ID_EVENT(icm_send_sidr_rep);
ICM_ID_EVENT(icm_send_dreq);
ICM_ID_EVENT(icm_send_drep);

/* API calls refused and messages that matched no state. */
ICM_ID_EVENT(icm_send_cm_rtu_err);
ICM_ID_EVENT(icm_establish_err);
ICM_ID_EVENT(icm_no_listener_err);
ICM_ID_EVENT(icm_send_drep_err);
ICM_ID_EVENT(icm_dreq_unknown_err);
ICM_ID_EVENT(icm_send_unknown_rej_err);
ICM_ID_EVENT(icm_rej_unknown_err);
ICM_ID_EVENT(icm_prepare_mra_unknown_err);
ICM_ID_EVENT(icm_mra_unknown_err);
ICM_ID_EVENT(icm_qp_init_err);
ICM_ID_EVENT(icm_qp_rtr_err);
ICM_ID_EVENT(icm_qp_rts_err);
ICM_ID_EVENT(icm_dreq_skipped);

TRACE_EVENT(icm_send_rej,
	    TP_PROTO(const struct ib_cm_id *cm_id, enum ib_cm_rej_reason reason),
	    TP_ARGS(cm_id, reason),

	    TP_STRUCT__entry(__field(const void *, cm_id)
			     __field(u32, local_id)
			     __field(u32, remote_id)
			     __field(unsigned long, state)
			     __field(unsigned long, reason)),

	    TP_fast_assign(__entry->cm_id = cm_id;
			   __entry->local_id = be32_to_cpu(cm_id->local_id);
			   __entry->remote_id = be32_to_cpu(cm_id->remote_id);
			   __entry->state = cm_id->state;
			   __entry->reason = reason;),

	    TP_printk("local_id=%u remote_id=%u state=%s reason=%lu",
		      __entry->local_id, __entry->remote_id,
		      cm_trace_state_name(__entry->state), __entry->reason)
);

/* Answers sent without an id, named by the comm IDs they carry. */
DECLARE_EVENT_CLASS(icm_local_class,
		    TP_PROTO(unsigned int local_id, unsigned int remote_id),
		    TP_ARGS(local_id, remote_id),

		    TP_STRUCT__entry(__field(unsigned int, local_id)
				     __field(unsigned int, remote_id)),

		    TP_fast_assign(__entry->local_id = local_id;
				   __entry->remote_id = remote_id;),

		    TP_printk("local_id=%u remote_id=%u",
			      __entry->local_id, __entry->remote_id)
);

#define ICM_LOCAL_EVENT(name)						\
	DEFINE_EVENT(icm_local_class, name,				\
		TP_PROTO(unsigned int local_id, unsigned int remote_id),\
		TP_ARGS(local_id, remote_id))

ICM_LOCAL_EVENT(icm_issue_rej);
ICM_LOCAL_EVENT(icm_issue_drep);
ICM_LOCAL_EVENT(icm_staleconn_err);
ICM_LOCAL_EVENT(icm_no_priv_err);

/* Messages from a peer we could not place. */
DECLARE_EVENT_CLASS(icm_remote_class,
		    TP_PROTO(u32 remote_id),
		    TP_ARGS(remote_id),

		    TP_STRUCT__entry(__field(u32, remote_id)),

		    TP_fast_assign(__entry->remote_id = remote_id;),

		    TP_printk("remote_id=%u", __entry->remote_id)
);

#define ICM_REMOTE_EVENT(name)						\
	DEFINE_EVENT(icm_remote_class, name,				\
		TP_PROTO(u32 remote_id),				\
		TP_ARGS(remote_id))

ICM_REMOTE_EVENT(icm_remote_no_priv_err);
ICM_REMOTE_EVENT(icm_insert_failed_err);

TRACE_EVENT(icm_send_rep_err,
	    TP_PROTO(u32 local_id, enum ib_cm_state state),
	    TP_ARGS(local_id, state),

	    TP_STRUCT__entry(__field(unsigned int, local_id)
			     __field(unsigned long, state)),

	    TP_fast_assign(__entry->local_id = local_id;
			   __entry->state = state;),

	    TP_printk("local_id=%u state=%s", __entry->local_id,
		      cm_trace_state_name(__entry->state))
);

TRACE_EVENT(icm_rep_unknown_err,
	    TP_PROTO(u32 local_id, u32 remote_id, enum ib_cm_state state),
	    TP_ARGS(local_id, remote_id, state),

	    TP_STRUCT__entry(__field(unsigned int, local_id)
			     __field(unsigned int, remote_id)
			     __field(unsigned long, state)),

	    TP_fast_assign(__entry->local_id = local_id;
			   __entry->remote_id = remote_id;
			   __entry->state = state;),

	    TP_printk("local_id=%u remote_id=%u state=%s", __entry->local_id,
		      __entry->remote_id, cm_trace_state_name(__entry->state))
);

TRACE_EVENT(icm_handler_err,
	    TP_PROTO(enum ib_cm_event_type event),
	    TP_ARGS(event),

	    TP_STRUCT__entry(__field(unsigned long, event)),

	    TP_fast_assign(__entry->event = event;),

	    TP_printk("handler returned non-zero for event %lu", __entry->event)
);

TRACE_EVENT(icm_mad_send_err,
	    TP_PROTO(enum ib_cm_state state, enum ib_wc_status wc_status),
	    TP_ARGS(state, wc_status),

	    TP_STRUCT__entry(__field(unsigned long, state)
			     __field(unsigned long, wc_status)),

	    TP_fast_assign(__entry->state = state;
			   __entry->wc_status = wc_status;),

	    TP_printk("state=%s completion status=%lu",
		      cm_trace_state_name(__entry->state), __entry->wc_status)
);

#endif /* _IB_CM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cm_trace

#include <trace/define_trace.h>

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
 * Each list of names once.  A user expands a list with two macros of its
 * own, entry(name) for all but the last and last(name) for the last one
 * (__print_symbolic() takes no trailing comma): the tracepoints'
 * TRACE_DEFINE_ENUM() and __print_symbolic() below, cm.c's name tables
 * (the debugfs listing, KUnit's case names) and enum cm_cause.  The
 * macros that build those are here too, as checkpatch takes every X-macro
 * for a complex expression; tools/testing/checkpatch.sh lets it pass in
 * this file alone.
 *
 * CM_STATES and CM_LAP_STATES name the values of enum ib_cm_state and
 * enum ib_cm_lap_state without their IB_CM_ prefix.  The enums themselves
 * stay written out in <rdma/ib_cm.h>, the ABI every consumer reads, with
 * their kernel-doc; cm.c checks at build time that each list covers its
 * enum (a name that is not a value does not compile).
 */
#define CM_STATES(entry, last)						\
	entry(IDLE)							\
	entry(LISTEN)							\
	entry(REQ_SENT)							\
	entry(REQ_RCVD)							\
	entry(MRA_REQ_SENT)						\
	entry(MRA_REQ_RCVD)						\
	entry(REP_SENT)							\
	entry(REP_RCVD)							\
	entry(MRA_REP_SENT)						\
	entry(MRA_REP_RCVD)						\
	entry(ESTABLISHED)						\
	entry(DREQ_SENT)						\
	entry(DREQ_RCVD)						\
	entry(TIMEWAIT)							\
	entry(SIDR_REQ_SENT)						\
	last(SIDR_REQ_RCVD)

#define CM_LAP_STATES(entry, last)					\
	entry(LAP_UNINIT)						\
	entry(LAP_IDLE)							\
	entry(LAP_SENT)							\
	entry(LAP_RCVD)							\
	entry(MRA_LAP_SENT)						\
	last(MRA_LAP_RCVD)

/*
 * Why the state of an id changes, in the IBTA's terms: a message sent by
 * an API call or received, a timer, a notification, or the CM itself
 * (STALE_CONN: it disconnects a connection whose remote QP was reused;
 * DROP: it drops a new id before handing it over).  cm.c's transition
 * tables are written in these (enum cm_cause, CM_ prefixed), and
 * icm_state records them.
 */
#define CM_CAUSE_LIST(entry, last)					\
	entry(LISTEN)							\
	entry(SEND_REQ)							\
	entry(RECV_REQ)							\
	entry(RECV_MRA)							\
	entry(PREPARE_MRA)						\
	entry(SEND_REJ)							\
	entry(RECV_REJ)							\
	entry(SEND_REP)							\
	entry(RECV_REP)							\
	entry(SEND_RTU)							\
	entry(RECV_RTU)							\
	entry(COMM_EST)							\
	entry(SEND_DREQ)						\
	entry(RECV_DREQ)						\
	entry(STALE_CONN)						\
	entry(SEND_DREP)						\
	entry(RECV_DREP)						\
	entry(SEND_SIDR_REQ)						\
	entry(RECV_SIDR_REQ)						\
	entry(SEND_SIDR_REP)						\
	entry(RECV_SIDR_REP)						\
	entry(RECV_LAP)							\
	entry(RECV_APR)							\
	entry(PATH_MIG)							\
	entry(TIMEOUT)							\
	entry(TIMEWAIT_END)						\
	entry(DROP)							\
	last(DESTROY)

/* Designated initialisers of a name table, and a count of the entries. */
#define CM_STATE_NAME(name) [IB_CM_##name] = #name,
#define CM_COUNT_ONE(name) + 1

#define CM_CAUSE_ENUM(name) CM_##name,
enum cm_cause {
	CM_CAUSE_LIST(CM_CAUSE_ENUM, CM_CAUSE_ENUM)
	CM_CAUSES
};

#undef CM_CAUSE_ENUM
#endif /* _IB_CM_CAUSE_H */

#if !defined(_IB_CM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IB_CM_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>

/* The values behind the names below, for perf and trace-cmd. */
#define CM_TP_STATE_ENUM(name) TRACE_DEFINE_ENUM(IB_CM_##name);
#define CM_TP_CAUSE_ENUM(name) TRACE_DEFINE_ENUM(CM_##name);
CM_STATES(CM_TP_STATE_ENUM, CM_TP_STATE_ENUM)
CM_LAP_STATES(CM_TP_STATE_ENUM, CM_TP_STATE_ENUM)
CM_CAUSE_LIST(CM_TP_CAUSE_ENUM, CM_TP_CAUSE_ENUM)

#define CM_TP_STATE(name) { IB_CM_##name, #name },
#define CM_TP_STATE_LAST(name) { IB_CM_##name, #name }
#define CM_TP_CAUSE(name) { CM_##name, #name },
#define CM_TP_CAUSE_LAST(name) { CM_##name, #name }
#define cm_trace_state_name(s)						\
	__print_symbolic(s, CM_STATES(CM_TP_STATE, CM_TP_STATE_LAST))
#define cm_trace_lap_state_name(s)					\
	__print_symbolic(s, CM_LAP_STATES(CM_TP_STATE, CM_TP_STATE_LAST))
#define cm_trace_cause_name(c)						\
	__print_symbolic(c, CM_CAUSE_LIST(CM_TP_CAUSE, CM_TP_CAUSE_LAST))

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

/*
 * The backoff schedule could not make or post the next copy of a retried
 * message (@err: -ENOMEM for an atomic allocation that failed): the
 * exchange ends as if its last send had timed out.
 */
TRACE_EVENT(icm_resend_err,
	    TP_PROTO(u32 local_id, enum ib_cm_state state, int err),
	    TP_ARGS(local_id, state, err),

	    TP_STRUCT__entry(__field(unsigned int, local_id)
			     __field(unsigned long, state)
			     __field(int, err)),

	    TP_fast_assign(__entry->local_id = local_id;
			   __entry->state = state;
			   __entry->err = err;),

	    TP_printk("local_id=%u state=%s err=%d", __entry->local_id,
		      cm_trace_state_name(__entry->state), __entry->err)
);

#endif /* _IB_CM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cm_trace

#include <trace/define_trace.h>

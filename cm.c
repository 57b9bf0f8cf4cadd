// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm - the InfiniBand Communication Manager.
 *
 * This module runs the connection protocols of IBTA Vol 1 chapter 12 on
 * QP1 of every CM-capable port: REQ/MRA/REJ/REP/RTU to connect, DREQ/DREP
 * to disconnect, SIDR_REQ/SIDR_REP to resolve UD service IDs, and it
 * accepts LAP and APR.  Its users (rdma_cm, SRP, IPoIB...) see the API of
 * include/rdma/ib_cm.h.
 *
 * How things flow
 * ---------------
 * A received MAD is checked and its id found in the MAD layer's context
 * (cm_recv_handler(): each message's cm_msg_ops.get), without the global
 * lock: by our local comm ID in an xarray, by the peer's comm ID and CA
 * GUID or by service ID in rhashtables, all under RCU.  It is then queued
 * as a struct cm_work on that id, a REQ or SIDR_REQ on its listener.  A
 * MAD nobody can use is dropped and counted, or, if it needs an answer
 * (REJ, DREP, SIDR_REP), queued on its port's answer queue: making that
 * answer's address handle may sleep, on RoCE up to a second while the
 * peer's address is resolved, and nothing that can sleep may run in the
 * MAD layer's context, which alone refills QP1's receive queue (see
 * cm_answer_work()).  Each id has a work item on cm.wq, a concurrent
 * workqueue, that takes the id's inputs one at a time in arrival order:
 * received MADs, the failure of its retried send (cm_send_handler()),
 * ib_cm_notify(COMM_EST) and the end of timewait, the last three embedded
 * in the id so that nothing on those paths allocates (the end of
 * timewait comes from a delayed work item of its own).  Each input is
 * handled under the id's lock, which changes the state with
 * cm_change_state(); the handler is then called with no lock held.  So
 * events for one id reach its handler one at a time and in order, while a
 * handler that sleeps holds up its own id alone.  Inputs waiting are
 * bounded per id (CM_ID_BACKLOG), answers waiting per port
 * (CM_ANSWER_BACKLOG), and both together per port (CM_PORT_BACKLOG).
 * A listener's queue makes a REQ's new id; that id's address handles,
 * which may sleep too, are made on cm.setup_wq (struct cm_req_work).
 *
 * Since a MAD finds its id before the inputs ahead of it have run, a
 * lookup at arrival uses only what those cannot change: a REJ is found by
 * our comm ID alone and checked against the peer in cm_recv_rej(); a REJ
 * TIMEOUT whose REQ still waits for its listener waits with it
 * (cm_rej_with_req()).  Documentation/infiniband/ib_cm.rst, "Arrival
 * order", lists every lookup.
 *
 * Lifetime
 * --------
 * A cm_id_priv is reference counted.  The user holds one reference from
 * ib_create_cm_id() (or from the REQ_RECEIVED/SIDR_REQ_RECEIVED event that
 * handed it over) until ib_destroy_cm_id().  The id's inputs while they
 * are being run (@work_busy), each send awaiting its completion, a pending
 * end of timewait and every lookup in progress hold one more; a received
 * MAD waiting in the id's queue is covered by the work item's.  A REQ
 * being set up (struct cm_req_work) holds its listener until the new id
 * is handed over, and the new id's inputs are held (cm_hold_work()) until
 * then.  A retried send's buffer points at its id until the send
 * completes or is cancelled (cm_cancel_msg() detaches it), so a completion
 * the MAD layer never delivers holds nothing.  ib_destroy_cm_id() marks
 * the id destroyed, which stops any further callback, and waits only for
 * a callback running in another task; called from the id's own
 * callback, it is carried out when the callback returns.  An established id that is destroyed keeps
 * retrying its DREQ, without callbacks, until it reaches timewait.  An id
 * destroyed in timewait hands its comm IDs to a small struct cm_timewait
 * and is freed.  Memory is freed after an RCU grace period when the last
 * reference goes.
 *
 * Locking
 * -------
 * cm.lock (irq-safe) serialises changes of the lookup tables (listeners,
 *   remote comm IDs, remote QPs: rhashtables read under RCU; received
 *   SIDR requests: an rbtree read under the lock) and the device list.
 * cm_id_priv->lock (irq-safe) protects the id's state, protocol fields and
 *   input queue.  It may be taken before cm.lock, never after it.  Our
 *   own code takes it in process context only (timewait ends in a work
 *   item, not a timer); ib_cm_notify() takes it where its caller runs, a
 *   QP event handler.  Under it the CM posts and cancels MADs and drops
 *   address handles, which takes the driver's locks: rxe's pool lock is
 *   not softirq-safe, so a timer of ours taking an id's lock in softirq
 *   context could deadlock against it (lockdep reported that inversion).
 * cm_device->agent_lock (rwlock) keeps a port's MAD agents from going
 *   away while a send is being prepared (and, for a resend of the backoff
 *   schedule, posted).  It is taken under cm_id_priv->lock, and its
 *   readers, too, disable interrupts: a reader interrupted by a QP event
 *   handler that takes an id's lock, while a writer waits, would deadlock
 *   against a holder of that id waiting for the agent lock.
 * A timewait record's timer (softirq) takes cm.lock and the local IDs'
 *   xarray lock, each alone.
 * cm_port->policy_lock (irq-safe) protects the port's CM policy.  It is a
 *   leaf lock: taken under cm_id_priv->lock (cm_take_policy()) or alone,
 *   and nothing is taken under it.
 * Local IDs live in an xarray with its own lock; lookups by local ID run
 *   under RCU and take a reference with refcount_inc_not_zero().
 * No lock is held while a handler runs.
 *
 * Names: a function whose name ends in _locked is called with the lock
 * of the id it is given (p->lock) held.  Names say nothing of cm.lock:
 * every function that needs a lock, the _locked ones and the others
 * (cm_set_state(), cm_enter_timewait(), the table helpers...), says so
 * with lockdep_assert_held().  A lookup named cm_get_*() returns a
 * reference on what it found (cm_put_id() drops it); one named
 * cm_find_*() returns none and is called where what it finds cannot go
 * away (under cm.lock or RCU).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/indirect_call_wrapper.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/rbtree.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_sysfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/opa_addr.h>

#include "core_priv.h"
#include "cm_msgs.h"

#define CREATE_TRACE_POINTS
#include "cm_trace.h"

/*
 * A step a KUnit suite may stand in for (kunit_activate_static_stub()), to
 * see the state between two others; nothing at all without the suites.
 * With a stand-in active, the function returns what the stand-in returns.
 */
#if IS_ENABLED(CONFIG_INFINIBAND_CM_KUNIT_TEST)
#include <kunit/static_stub.h>
#define CM_KUNIT_STUB(fn, ...) KUNIT_STATIC_STUB_REDIRECT(fn, __VA_ARGS__)
#else
#define CM_KUNIT_STUB(...) do { } while (0)
#endif

MODULE_AUTHOR("The ib_cm project");
MODULE_DESCRIPTION("InfiniBand Communication Manager");
MODULE_LICENSE("GPL");

/* Service timeout we put in every MRA we send (about 69 seconds). */
#define CM_MRA_SERVICE_TIMEOUT_VALUE	24

/*
 * Received MADs waiting to be processed, at most: on one port, and on one
 * id (a listener's REQs, say).  What comes beyond is dropped and counted
 * in cm_rx_drops/backlog; the peer resends it, as it resends a MAD lost on
 * the wire.  A peer that follows the protocol has no more than the MAD
 * layer's window of messages outstanding towards us (128 per agent), so
 * only a flood reaches these.  Each waiting MAD pins about 600 bytes (a
 * REQ, with its struct cm_req_work, about 850).
 */
#define CM_PORT_BACKLOG		4096
#define CM_ID_BACKLOG		512
/*
 * MADs waiting on one port for an answer from nobody's id (a REQ for no
 * listener, say), at most, and for how long.  They are answered one at a
 * time, and on RoCE a peer whose address does not resolve holds each of
 * its answers up for a second (ib_core's address resolution timeout).  A
 * MAD that has waited CM_ANSWER_MAX_AGE is dropped unanswered: its peer
 * has resent it or given up by then, and a flood of them drains at once.
 */
#define CM_ANSWER_BACKLOG	256
#define CM_ANSWER_MAX_AGE	HZ
/*
 * REQs taken up by their listeners that are set up or answered at once
 * (struct cm_req_work), at most; the rest wait their turn.  Each may wait
 * a second for its sender's address, genuine ones microseconds.  One whose
 * sender stopped waiting for it before its turn came (the REQ's remote CM
 * response timeout, at least CM_ANSWER_MAX_AGE) is dropped unanswered and
 * counted in cm_rx_drops/backlog: its sender has resent it by then.
 */
#define CM_SETUP_MAX		16

/* Counters kept per port, in the groups the sysfs directories show. */
enum cm_counter_group {
	CM_XMIT,
	CM_XMIT_RETRIES,
	CM_RECV,
	CM_RECV_DUPLICATES,
	CM_RECV_DROPPED,
	CM_COUNTER_GROUPS
};

#define CM_ATTR_FIRST		0x10
#define CM_ATTR_COUNT		11	/* REQ (0x10) .. APR (0x1A) */

/* Why a received MAD was dropped; shown in the cm_rx_drops group. */
enum cm_drop_reason {
	CM_DROP_LENGTH,		/* shorter than a CM MAD */
	CM_DROP_VERSION,	/* base or class version we do not speak */
	CM_DROP_METHOD,		/* not a SEND */
	CM_DROP_ATTR,		/* attribute ID outside REQ..APR */
	CM_DROP_FIELD,		/* a field value outside its range */
	CM_DROP_NOMEM,		/* no memory to process it */
	CM_DROP_UNMATCHED,	/* for no connection we know, or out of state */
	CM_DROP_BACKLOG,	/* too many waiting already: the peer resends */
	CM_DROP_REASONS
};

#define CM_RETRIES_MAX		15	/* the 4-bit field's largest */
#define CM_TIMEOUT_MAX		31	/* the 5-bit field's largest */
/* cm_iba_to_ms(CM_TIMEOUT_MAX): 8388608 ms, about 2.3 hours */
#define CM_BACKOFF_MAX_MS	(1U << (CM_TIMEOUT_MAX - 8))

enum cm_schedule {
	CM_SCHEDULE_FIXED,	/* the IBTA's fixed interval (stock) */
	CM_SCHEDULE_BACKOFF,	/* exponential backoff with jitter */
	CM_SCHEDULES
};

static const char * const cm_schedule_names[CM_SCHEDULES] = {
	[CM_SCHEDULE_FIXED] = "fixed",
	[CM_SCHEDULE_BACKOFF] = "backoff",
};

/* cm_policy_parse() names both in its message. */
static_assert(CM_SCHEDULES == 2);

/**
 * struct cm_policy - how the CM waits for answers on one port
 * @max_retries: most resends of a message; CM_RETRIES_MAX bounds nothing
 * @max_response_timeout: largest response timeout (IBTA exponent) a
 *	message may advertise and be waited for; CM_TIMEOUT_MAX bounds
 *	nothing
 * @schedule: enum cm_schedule
 * @backoff_max_ms: backoff: longest wait before jitter, unless the
 *	advertised timeout is longer
 * @backoff_jitter: backoff: percent of a wait added to it at most, at random
 *
 * All u32, so that one table (cm_policy_knobs) describes them all.
 * "The CM policy of a port", further down, says what each does.
 */
struct cm_policy {
	u32 max_retries;
	u32 max_response_timeout;
	u32 schedule;
	u32 backoff_max_ms;
	u32 backoff_jitter;
};

struct cm_device;
struct cm_transport;

/**
 * struct cm_port - the CM on one port of a device
 * @cm_dev: the device this port belongs to
 * @mad_agent: sends and receives CM MADs on QP1
 * @send_agent: send-only agent, which the MAD layer's flow-control window
 *	leaves alone: for REPs, so that REQs waiting in that window never
 *	starve the REPs that answer them, and for the DREQs of destroyed ids
 *	(see cm_send_dreq_locked())
 * @port_num: the port number (from 1)
 * @counters: message counters, by group and attribute
 * @drops: received MADs dropped, by reason
 * @backlog: received MADs waiting on the queues of ids and on @answers
 * @destroy_dreqs: destroyed ids' DREQs being retried (cm_limit_destroy_dreq())
 * @answer_lock: protects @answers and @nr_answers
 * @answers: received MADs that nobody's id takes and that need an answer
 * @nr_answers: entries on @answers
 * @answer_work: answers them, on cm.wq
 * @policy_lock: protects @policy
 * @policy: the port's CM policy (see "The CM policy of a port")
 */
struct cm_port {
	struct cm_device *cm_dev;
	struct ib_mad_agent *mad_agent;
	struct ib_mad_agent *send_agent;
	u32 port_num;
	atomic_t backlog;
	atomic_t destroy_dreqs;
	spinlock_t answer_lock;		/* @answers */
	struct list_head answers;
	unsigned int nr_answers;
	struct work_struct answer_work;
	spinlock_t policy_lock;		/* @policy */
	struct cm_policy policy;
	atomic_long_t counters[CM_RECV_DUPLICATES + 1][CM_ATTR_COUNT];
	atomic_long_t drops[CM_DROP_REASONS];
};

/**
 * struct cm_device - the CM's state for one RDMA device
 * @kref: held by the client registration and by each address vector
 * @list: entry in cm.devices
 * @ib_device: the device
 * @tp: how the CM reaches the MAD layer and ib_core for this device
 * @agent_lock: readers prepare sends; the writer clears the agents
 * @ah_rwsem: held for reading while an address handle is made; the
 *	device's removal takes it for writing to wait for those
 * @ah_lock: protects @ahs and the ib_ah of each entry
 * @ahs: the struct cm_ah made on this device
 * @ahs_gone: the address handles were destroyed with the device
 * @going_down: set under cm.lock when the device is being removed
 * @ack_delay: the CA's local ACK delay (IBTA encoding)
 * @nports: number of entries in @port
 * @port: per port state, NULL where the port has no CM
 */
struct cm_device {
	struct kref kref;
	struct list_head list;
	struct ib_device *ib_device;
	const struct cm_transport *tp;
	rwlock_t agent_lock;
	struct rw_semaphore ah_rwsem;
	spinlock_t ah_lock;		/* @ahs and their ib_ah */
	struct list_head ahs;
	bool ahs_gone;
	bool going_down;
	u8 ack_delay;
	u32 nports;
	struct cm_port *port[] __counted_by(nports);
};

/**
 * struct cm_av - where messages of a connection go, and how
 * @port: the local port (holds a reference on its device)
 * @ah_attr: address vector of the peer (holds a GID attribute reference)
 * @ah: the address handle of the path, shared by its sends (or NULL)
 * @pkey_index: P_Key index to send with
 * @dlid_datapath: DLID for the data path when it differs from the CM's
 * @timeout: local ACK timeout for the QP, IBTA encoding
 */
struct cm_av {
	struct cm_port *port;
	struct rdma_ah_attr ah_attr;
	struct cm_ah *ah;
	u16 pkey_index;
	u16 dlid_datapath;
	u8 timeout;
};

/**
 * struct cm_ah - an address handle shared by the sends along one path
 * @ref: the path (struct cm_av) and each send buffer using it
 * @ah: the address handle; NULL once the device is gone
 * @port: the port it was made for (holds a reference on its device)
 * @list: entry in the device's list of handles
 *
 * Made where sleeping is allowed, when the path is set, so that no send
 * creates an address handle with the id's spinlock held and interrupts
 * off; a REQ, its retries, the DREQ and all other messages along the path
 * then share it.
 */
struct cm_ah {
	refcount_t ref;
	struct ib_ah *ah;
	struct cm_port *port;
	struct list_head list;
};

/*
 * Keys of the lookup tables.  They compare as bytes, so they have no
 * padding inside the compared length (cm_listen_params.key_len).
 */
struct cm_listen_key {
	__be64 service_id;
	struct ib_device *device;
};

struct cm_remote_key {
	__be64 ca_guid;
	__be32 comm_id;
	u32 zero;
};

struct cm_qp_key {
	__be64 ca_guid;
	__be32 qpn;
	u32 zero;
};

/**
 * struct cm_peer - an entry of cm.remote_ids: a peer's comm ID we know
 * @node: in the table
 * @key: the peer's CA GUID and comm ID
 * @linked: @node is in the table (under cm.lock)
 * @record: it belongs to a struct cm_timewait, not to a struct cm_id_priv
 *
 * Held by the connection it belongs to, to recognise a repeated REQ and a
 * REJ with reason TIMEOUT.
 */
struct cm_peer {
	struct rhash_head node;
	struct cm_remote_key key;
	bool linked;
	bool record;
};

/**
 * struct cm_timewait - what is left of an id destroyed in timewait
 * @peer: its entry in cm.remote_ids, so that a repeated REQ is rejected
 * @timer: ends timewait
 * @rcu: frees the record after lookups under RCU are done with it
 * @local_id: our comm ID, still reserved; its cm.local_ids entry points
 *	here, tagged CM_XA_RECORD
 *
 * Timewait keeps a connection's comm IDs from being taken for a new one
 * while packets of the old one may still be in flight, and answers the
 * peer's late DREQs and REQs.  That needs the two IDs and a timer, not the
 * whole id, so an id destroyed in timewait hands them to one of these and
 * is freed (see cm_timewait_compact_locked()).
 */
struct cm_timewait {
	struct cm_peer peer;
	struct timer_list timer;
	struct rcu_head rcu;
	__be32 local_id;
};

/* The tag of a struct cm_timewait in cm.local_ids. */
#define CM_XA_RECORD 1

/* What an input of an id is. */
enum cm_input_kind {
	CM_INPUT_RECV,		/* a received MAD (struct cm_work) */
	CM_INPUT_SEND_ERROR,	/* a retried send failed or timed out */
	CM_INPUT_ESTABLISH,	/* ib_cm_notify(IB_EVENT_COMM_EST) */
	CM_INPUT_TIMEWAIT,	/* timewait is over */
	CM_INPUT_HANDOVER,	/* a listener's new id is set up (cm_req_work) */
};

/**
 * struct cm_input - something an id has to process, in arrival order
 * @list: entry in the id's work_list (empty when not queued)
 * @kind: what it is
 *
 * Received MADs come as a struct cm_work each; the other kinds can be
 * pending at most once per id, and their input is part of the id, so
 * that nothing on the timeout path depends on an allocation.
 */
struct cm_input {
	struct list_head list;
	enum cm_input_kind kind;
};

/**
 * struct cm_work - a received MAD, queued on the id it is for
 * @in: its place on the id's queue
 * @port: the port it came in on
 * @queued: when it was queued (jiffies), for its port's answer queue
 * @recv_wc: the MAD, returned to the MAD layer after processing
 */
struct cm_work {
	struct cm_input in;
	struct cm_port *port;
	struct ib_mad_recv_wc *recv_wc;
	unsigned long queued;
};

struct cm_id_priv;

/* What a REQ taken up by its listener is (cm_match_req()). */
enum cm_req_match {
	CM_REQ_NEW,		/* a new connection */
	CM_REQ_REPEAT,		/* a repeat of one we know: answered as such */
	CM_REQ_STALE,		/* from a QP bound to a connection: REJ */
	CM_REQ_UNLISTENED,	/* the listener went meanwhile: REJ */
	CM_REQ_NOMEM,		/* no memory to record it: the peer resends */
};

/**
 * struct cm_req_work - a received REQ (or SIDR_REQ), and the setting up of
 *	what it asks
 * @work: the MAD, queued as any other
 * @waiting_node: in cm.waiting_reqs while the REQ waits on its listener's
 *	queue, where no id is made for it yet
 * @waiting_key: its sender's comm ID and CA GUID
 * @waiting: @waiting_node is in the table (under cm.lock)
 * @rej: a REJ TIMEOUT from that sender that came meanwhile; it goes where
 *	the REQ leads (cm_pass_on_rej())
 * @setup: makes the new id's address vectors, or the REQ's answer, on
 *	cm.setup_wq
 * @taken: when the listener took the REQ up (jiffies)
 * @match: what cm_match_req() made of it
 * @listen: the listener, referenced, until the new id is handed over
 * @id: the new id (CM_REQ_NEW)
 * @old: the connection the REQ repeats or makes stale, referenced, or NULL
 * @tw_local: our comm ID of the timewait record the REQ repeats
 * @path: the new connection's paths, for the REQ_RECEIVED event
 *
 * A SIDR_REQ uses @setup, @taken, @listen and @id alone: its id's
 * address handle is made the same way.
 *
 * A listener's queue matches a REQ against what we know and makes its id;
 * making the id's address handles may sleep (on RoCE for a second while a
 * sender's address does not resolve), and so may making an answer (a
 * REJ, an MRA for a repeat), so both happen in @setup; a new id is then
 * handed over by the listener (@work.in, queued on it again as
 * CM_INPUT_HANDOVER).  So the listener's queue never waits for an
 * address, and a REQ whose sender does not resolve holds up no other.
 */
struct cm_req_work {
	struct cm_work work;
	struct rhash_head waiting_node;
	struct cm_remote_key waiting_key;
	bool waiting;
	struct cm_work *rej;
	struct work_struct setup;
	unsigned long taken;
	enum cm_req_match match;
	struct cm_id_priv *listen;
	struct cm_id_priv *id;
	struct cm_id_priv *old;
	__be32 tw_local;
	struct sa_path_rec path[2];
};

/**
 * struct cm_id_priv - the CM's private part of a communication identifier
 * @id: the part consumers see
 * @lock: protects the state and the protocol fields below
 * @refcount: see "Lifetime" at the top of this file
 * @cb_done: woken when a callback of this id returns
 * @cb_task: the task running this id's handler, or NULL
 * @destroyed: ib_destroy_cm_id() was called; no more callbacks
 * @destroy_deferred: it was called from the id's own callback, and the id
 *	is wound down when that returns
 * @destroy_err: the handler's return value for that wind-down
 * @is_listener: the id listens (or listened) for REQs and SIDR_REQs
 * @work_list: inputs waiting to be processed, in arrival order
 * @work: processes @work_list on cm.wq, one input at a time
 * @work_busy: @work is queued or running, or the id is being handed over;
 *	a reference is held meanwhile
 * @nr_recv: received MADs on @work_list (and new ids to hand over)
 * @err_in: input for the failure of @msg
 * @est_in: input for ib_cm_notify(IB_EVENT_COMM_EST)
 * @tw_in: input for the end of timewait
 * @tw_work: ends timewait, on cm.wq (holds a reference while pending)
 * @tw_due: when @tw_work is due, in jiffies (a record taking the wait
 *	over ends then)
 * @listen_node: entry in cm.listeners (state LISTEN), by @listen_key
 * @listen_key: device and service ID
 * @listening: @listen_node is in the table (under cm.lock)
 * @listen_sharecount: users of a listener shared by ib_cm_insert_listen(),
 *	protected by cm.lock
 * @peer: entry in cm.remote_ids, by the peer's CA GUID and comm ID
 * @qp_node: entry in cm.remote_qps, by @qp_key, to find stale connections
 * @qp_key: the peer's CA GUID and QPN
 * @qp_linked: @qp_node is in the table (under cm.lock)
 * @sidr_node: entry in cm.sidr_tree while a received SIDR_REQ is pending
 * @msg: the send that is retried until answered (REQ, REP, DREQ, SIDR_REQ)
 * @msg_state: the state @msg was sent in
 * @err_state: the state of the send that failed (for @err_in)
 * @err_status: its completion status
 * @tid: transaction ID of the exchange this id takes part in
 * @av: primary path
 * @alt_av: alternate path (ah_attr is zero when there is none)
 * @remote_ca_guid: the peer CA's GUID
 * @local_qpn: our QP (or SIDR QP)
 * @remote_qpn: the peer's QP
 * @sq_psn: our send queue's starting PSN
 * @rq_psn: our receive queue's starting PSN
 * @pkey: P_Key of the connection
 * @qp_type: transport of the connection
 * @path_mtu: MTU of the path
 * @timeout_ms: how long to wait for the answer to @msg
 * @timeout_is_peers: @timeout_ms is what the peer advertised (the Local CM
 *	Response Timeout of its REQ, on the passive side), not ours
 * @max_cm_retries: how often @msg is resent
 * @policy: its port's CM policy as the exchange of @msg began
 *	(cm_take_policy())
 * @msg_timeout_ms: @timeout_ms under @policy
 * @msg_retries: @max_cm_retries under @policy
 * @msg_resends: how often the CM resent @msg itself (backoff schedule)
 * @msg_since: jiffies when the current wait for an answer began
 * @msg_wait_ms: how long that wait is
 * @msg_resends_since: resends of @msg done when it began
 * @msg_pkey_index: the P_Key index @msg was posted with, for the backoff
 *	schedule's copies (a destroyed id has no path left to read it from)
 * @msg_send_only: @msg went out on its port's send-only agent
 * @responder_resources: RDMA reads/atomics we accept
 * @initiator_depth: RDMA reads/atomics we issue
 * @retry_count: transport retry count
 * @rnr_retry_count: RNR retry count
 * @target_ack_delay: the peer's ACK delay from its REP
 * @sidr_gid: source GID of a received SIDR_REQ (with @sidr_lid, its key)
 * @sidr_lid: source LID of a received SIDR_REQ
 * @tw_handed_over: its local ID now belongs to a struct cm_timewait
 * @sent_data: private data of the RTU or DREP we sent last, for resending
 *	them to a repeated REP or DREQ (kmalloc()ed; NULL when there was none)
 * @sent_data_len: its length
 * @state_since: jiffies of the last change of @id.state (debugfs)
 * @rcu: frees the structure after lookups under RCU are done with it
 */
struct cm_id_priv {
	struct ib_cm_id id;

	spinlock_t lock;		/* state and protocol fields */
	refcount_t refcount;
	wait_queue_head_t cb_done;
	struct task_struct *cb_task;
	bool destroyed;
	bool destroy_deferred;
	int destroy_err;
	bool is_listener;

	struct list_head work_list;
	struct work_struct work;
	bool work_busy;
	unsigned int nr_recv;
	struct cm_input err_in;
	struct cm_input est_in;
	struct cm_input tw_in;
	struct delayed_work tw_work;
	unsigned long tw_due;

	struct rhash_head listen_node;
	struct cm_listen_key listen_key;
	bool listening;
	int listen_sharecount;
	struct cm_peer peer;
	struct rhlist_head qp_node;
	struct cm_qp_key qp_key;
	bool qp_linked;
	struct rb_node sidr_node;

	struct ib_mad_send_buf *msg;
	enum ib_cm_state msg_state;
	enum ib_cm_state err_state;
	enum ib_wc_status err_status;
	__be64 tid;

	struct cm_av av;
	struct cm_av alt_av;

	__be64 remote_ca_guid;
	__be32 local_qpn;
	__be32 remote_qpn;
	__be32 sq_psn;
	__be32 rq_psn;
	__be16 pkey;
	enum ib_qp_type qp_type;
	enum ib_mtu path_mtu;
	int timeout_ms;
	bool timeout_is_peers;
	u8 max_cm_retries;
	struct cm_policy policy;
	int msg_timeout_ms;
	u8 msg_retries;
	u8 msg_resends;
	unsigned long msg_since;
	int msg_wait_ms;
	int msg_resends_since;
	u16 msg_pkey_index;
	bool msg_send_only;
	u8 responder_resources;
	u8 initiator_depth;
	u8 retry_count;
	u8 rnr_retry_count;
	u8 target_ack_delay;
	union ib_gid sidr_gid;
	u16 sidr_lid;
	bool tw_handed_over;
	u8 sent_data_len;
	void *sent_data;
	unsigned long state_since;
	struct rcu_head rcu;
};

static struct {
	spinlock_t lock;		/* devices, and changes of the tables */
	struct list_head devices;
	struct rhashtable listeners;
	struct rhashtable remote_ids;
	struct rhltable remote_qps;
	struct rhashtable waiting_reqs;
	struct rb_root sidr_tree;
	struct xarray local_ids;
	u32 local_id_next;
	u32 local_id_mask;
	u64 next_service_id;
	atomic64_t tid_seq;
	struct workqueue_struct *wq;
	struct workqueue_struct *setup_wq;
	struct kmem_cache *id_cache;
	struct kmem_cache *work_cache;
	struct kmem_cache *req_work_cache;
	struct kmem_cache *tw_cache;
	atomic_t timewait_records;
	struct dentry *debugfs;
} cm = {
	.lock = __SPIN_LOCK_UNLOCKED(cm.lock),
	.devices = LIST_HEAD_INIT(cm.devices),
	.sidr_tree = RB_ROOT,
	.local_ids = XARRAY_INIT(cm.local_ids, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ),
};

static int cm_add_one(struct ib_device *device);
static void cm_remove_one(struct ib_device *device, void *client_data);

static struct ib_client cm_client = {
	.name = "cm",
	.add = cm_add_one,
	.remove = cm_remove_one,
};

static inline struct cm_id_priv *to_priv(struct ib_cm_id *cm_id)
{
	return container_of(cm_id, struct cm_id_priv, id);
}

/*
 * Timewait bounds.  The IBTA has a connection's ends wait, after it ends,
 * for as long as a packet of it may still be in flight: the local ACK
 * timeout, which covers a packet's round trip and the responder's ACK
 * delay.  Real fabrics, long-haul links included, stay far below
 * 2^24 * 4.096us (69 s); a larger value, up to 2^31 * 4.096us (2.4 hours),
 * comes from a broken or hostile peer's REQ and is cut to that.  A peer
 * that ends many connections at once could still fill memory with
 * timewait records, so at most max_timewait of them exist: past that, a
 * destroyed id ends timewait at once.  Its comm ID is not reused early
 * even so (local IDs are handed out cyclically from 2^32), and the peer's
 * late DREQ is still answered; only a late duplicate REQ is then taken
 * for a new one, which the peer drops as it has moved on.
 */
#define CM_TIMEWAIT_MAX_IBA 24

static unsigned int cm_max_timewait = 65536;
module_param_named(max_timewait, cm_max_timewait, uint, 0644);
MODULE_PARM_DESC(max_timewait,
		 "Most destroyed ids kept in timewait at once (default 65536)");

/* ---------------------------------------------------------------------
 * Small conversions
 */

/*
 * A 5-bit IBTA time value t stands for 4.096us * 2^t; rounded to
 * milliseconds that is 2^(t-8), at least 1.  Wider values (a path's
 * 6-bit packet lifetime) count as the largest, 31.
 */
static int cm_iba_to_ms(unsigned int t)
{
	return 1 << max_t(int, (int)min(t, 31U) - 8, 0);
}

/*
 * Local ACK timeout for a QP: the round trip of a packet (twice its
 * lifetime, i.e. lifetime + 1 in the logarithmic encoding) plus the
 * ACK delay of the responding CA; the sum of two powers of two is
 * rounded up to the next one.
 */
static u8 cm_ack_timeout(u8 ca_ack_delay, u8 packet_life_time)
{
	unsigned int rtt = packet_life_time + 1;
	unsigned int hi = max_t(unsigned int, rtt, ca_ack_delay);
	unsigned int lo = min_t(unsigned int, rtt, ca_ack_delay);

	/* 2^hi + 2^lo needs one more bit unless 2^lo is small in comparison */
	if (lo + 1 >= hi)
		hi++;
	return min(hi, 31U);
}

/*
 * A value for a field of @bits bits: callers may ask for more than the
 * wire carries (the stock CM accepts and truncates that); it is clamped.
 */
static u8 cm_clamp(u8 val, unsigned int bits)
{
	return min_t(u8, val, BIT(bits) - 1);
}

/* ---------------------------------------------------------------------
 * The CM policy of a port
 *
 * How long the CM waits for the answer to a retried message (REQ, REP,
 * DREQ, SIDR_REQ; LAP, which no API sends in 7.2, would be one too) and
 * how often it resends it.  Each port has its own policy, in sysfs
 * (cm_policy/ beside the counters), starting out as the module
 * parameters say.  Every number the CM waits or retries by passes
 * through the functions of this section, and nowhere else:
 *
 * - a response timeout (the 5-bit IBTA exponent) that a REQ advertises
 *   is cut to max_response_timeout (cm_policy_timeout());
 * - a wait for an answer (the first, and every one of the fixed
 *   schedule), the extension an MRA asks for and timewait are cut to the
 *   time that exponent stands for (cm_policy_wait_cap(),
 *   cm_policy_timeout()), which is never below the response timeout
 *   advertised; except a wait whose timeout the peer advertised (the
 *   passive side's REP waiting for the RTU and its DREQ, which wait for
 *   the Local CM Response Timeout of the peer's REQ): the peer said it
 *   may take that long, so those keep it and only their retries are
 *   capped (p->timeout_is_peers), except once the id is destroyed
 *   (CM_DESTROY_TIMEOUT);
 * - the retries a REQ advertises, and those of every retried message,
 *   are cut to max_retries (cm_policy_retries());
 * - the schedule decides each wait (cm_policy_wait_ms()): "fixed" waits
 *   the same timeout before every resend, as the IBTA describes and the
 *   stock module does (the MAD layer resends); "backoff" doubles the wait
 *   after every send up to backoff_max_ms, never below the timeout, and
 *   adds up to backoff_jitter percent at random (the CM resends).
 *
 * The largest value of each bound (15 retries, timeout 31) bounds
 * nothing: a SIDR_REQ's retries and waits are not limited to what the
 * wire carries, and the stock module leaves them as asked.  With the
 * defaults, every message and timer is the stock module's.  A policy is
 * taken for an exchange when it begins (cm_take_policy()), so a change
 * applies to exchanges that begin after it.
 */

/* The defaults of new ports (module parameters). */
static struct cm_policy cm_policy_default = {
	.max_retries = CM_RETRIES_MAX,
	.max_response_timeout = CM_TIMEOUT_MAX,
	.schedule = CM_SCHEDULE_FIXED,
	.backoff_max_ms = 65536,
	.backoff_jitter = 25,
};

/**
 * struct cm_policy_knob - one setting of struct cm_policy
 * @name: its file in cm_policy/ (and, prefixed with "policy_", its module
 *	parameter)
 * @offset: where it is in struct cm_policy
 * @min: its smallest value
 * @max: its largest value
 * @words: names of the values, or NULL for a decimal number
 */
struct cm_policy_knob {
	const char *name;
	size_t offset;
	u32 min;
	u32 max;
	const char * const *words;
};

#define CM_KNOB(field, lo, hi, w)					\
	{ .name = #field, .offset = offsetof(struct cm_policy, field),	\
	  .min = lo, .max = hi, .words = w }

enum cm_knob_index {
	CM_KNOB_MAX_RETRIES,
	CM_KNOB_MAX_RESPONSE_TIMEOUT,
	CM_KNOB_SCHEDULE,
	CM_KNOB_BACKOFF_MAX_MS,
	CM_KNOB_BACKOFF_JITTER,
	CM_KNOBS
};

static const struct cm_policy_knob cm_policy_knobs[CM_KNOBS] = {
	[CM_KNOB_MAX_RETRIES] = CM_KNOB(max_retries, 0, CM_RETRIES_MAX, NULL),
	[CM_KNOB_MAX_RESPONSE_TIMEOUT] =
		CM_KNOB(max_response_timeout, 0, CM_TIMEOUT_MAX, NULL),
	[CM_KNOB_SCHEDULE] =
		CM_KNOB(schedule, 0, CM_SCHEDULES - 1, cm_schedule_names),
	[CM_KNOB_BACKOFF_MAX_MS] =
		CM_KNOB(backoff_max_ms, 1, CM_BACKOFF_MAX_MS, NULL),
	[CM_KNOB_BACKOFF_JITTER] = CM_KNOB(backoff_jitter, 0, 100, NULL),
};

static u32 *cm_knob_val(struct cm_policy *pol, const struct cm_policy_knob *k)
{
	return (u32 *)((char *)pol + k->offset);
}

static u32 cm_knob_get(const struct cm_policy *pol,
		       const struct cm_policy_knob *k)
{
	return *(const u32 *)((const char *)pol + k->offset);
}

/*
 * Parse @buf (a sysfs write or a module parameter, @what names it in the
 * message) as a value of @k into *@val: -EINVAL, and a rate-limited
 * message that says what is allowed, for anything else.
 */
static int cm_policy_parse(const struct cm_policy_knob *k, const char *what,
			   const char *buf, u32 *val)
{
	int len = strcspn(buf, "\n");
	int ret;

	if (k->words) {
		ret = __sysfs_match_string(k->words, k->max + 1, buf);
		if (ret >= 0) {
			*val = ret;
			return 0;
		}
		pr_warn_ratelimited("%s: \"%*pE\" is neither %s nor %s\n",
				    what, min(len, 32), buf, k->words[0],
				    k->words[1]);
		return -EINVAL;
	}
	ret = kstrtou32(buf, 10, val);
	if (ret || *val < k->min || *val > k->max) {
		pr_warn_ratelimited("%s: \"%*pE\" is not a number from %u to %u\n",
				    what, min(len, 32), buf, k->min, k->max);
		return -EINVAL;
	}
	return 0;
}

/* A response timeout (IBTA exponent) under @pol. */
static u8 cm_policy_timeout(const struct cm_policy *pol, u8 t)
{
	return min_t(u32, t, pol->max_response_timeout);
}

/* A wait for an answer, in ms, under @pol. */
static int cm_policy_wait_cap(const struct cm_policy *pol, int ms)
{
	if (pol->max_response_timeout >= CM_TIMEOUT_MAX)
		return ms;
	return min(ms, cm_iba_to_ms(pol->max_response_timeout));
}

/* A number of resends under @pol. */
static u8 cm_policy_retries(const struct cm_policy *pol, u8 retries)
{
	if (pol->max_retries >= CM_RETRIES_MAX)
		return retries;
	return min_t(u32, retries, pol->max_retries);
}

/*
 * How long to wait for the answer after send number @attempt (0 for the
 * first) of a message whose timeout is @timeout_ms, with @rnd a random
 * number.  Fixed: @timeout_ms.  Backoff: @timeout_ms * 2^@attempt, at
 * most backoff_max_ms but never below @timeout_ms, plus a jitter of
 * (@rnd / 2^32) times backoff_jitter percent of that.
 */
static int cm_policy_wait_ms(const struct cm_policy *pol, int timeout_ms,
			     unsigned int attempt, u32 rnd)
{
	u64 wait, span;

	if (pol->schedule != CM_SCHEDULE_BACKOFF || timeout_ms <= 0)
		return timeout_ms;
	wait = (u64)timeout_ms << min(attempt, 31U);
	wait = min_t(u64, wait, pol->backoff_max_ms);
	wait = max_t(u64, wait, timeout_ms);
	/* wait < 2^31 and jitter <= 100: no overflow */
	span = div_u64(wait * pol->backoff_jitter, 100);
	wait += (span * rnd) >> 32;
	return min_t(u64, wait, INT_MAX);
}

static int cm_policy_format(const struct cm_policy *pol,
			    const struct cm_policy_knob *k, char *buf)
{
	u32 v = cm_knob_get(pol, k);

	if (k->words)
		return sysfs_emit(buf, "%s\n", k->words[v]);
	return sysfs_emit(buf, "%u\n", v);
}

/*
 * The module parameters policy_<knob> are the policy of each port as it
 * is added; they are set when the module is loaded.  Each one's argument
 * is its field of cm_policy_default, which tells its knob.
 */
static const struct cm_policy_knob *cm_param_knob(const struct kernel_param *kp)
{
	size_t offset = (char *)kp->arg - (char *)&cm_policy_default;
	unsigned int i;

	for (i = 0; i < CM_KNOBS; i++)
		if (cm_policy_knobs[i].offset == offset)
			return &cm_policy_knobs[i];
	WARN_ON_ONCE(1);
	return NULL;
}

static int cm_policy_param_set(const char *val, const struct kernel_param *kp)
{
	const struct cm_policy_knob *k = cm_param_knob(kp);
	u32 *field = kp->arg;
	u32 v;
	int ret;

	if (!k)
		return -EINVAL;
	ret = cm_policy_parse(k, kp->name, val, &v);
	if (!ret)
		*field = v;
	return ret;
}

static int cm_policy_param_get(char *buf, const struct kernel_param *kp)
{
	const struct cm_policy_knob *k = cm_param_knob(kp);

	if (!k)
		return -EINVAL;
	return cm_policy_format(&cm_policy_default, k, buf);
}

static const struct kernel_param_ops cm_policy_param_ops = {
	.set = cm_policy_param_set,
	.get = cm_policy_param_get,
};

#define CM_POLICY_PARAM(field, desc)					\
	module_param_cb(policy_##field, &cm_policy_param_ops,		\
			&cm_policy_default.field, 0444);		\
	MODULE_PARM_DESC(policy_##field, desc)

CM_POLICY_PARAM(max_retries,
		"Most resends of a CM message, 0-15 (default 15: no bound)");
CM_POLICY_PARAM(max_response_timeout,
		"Largest CM response timeout, 4.096us * 2^N, 0-31 (default 31: no bound)");
CM_POLICY_PARAM(schedule,
		"When to resend: fixed (the IBTA's interval, default) or backoff");
CM_POLICY_PARAM(backoff_max_ms,
		"backoff: longest wait before jitter, ms (default 65536)");
CM_POLICY_PARAM(backoff_jitter,
		"backoff: random extra wait, percent, 0-100 (default 25)");

/* The policy of @port now, or the defaults where there is no port. */
static void cm_port_policy(struct cm_port *port, struct cm_policy *pol)
{
	unsigned long flags;

	if (!port) {
		*pol = cm_policy_default;
		return;
	}
	spin_lock_irqsave(&port->policy_lock, flags);
	*pol = port->policy;
	spin_unlock_irqrestore(&port->policy_lock, flags);
}

/*
 * An exchange of @p begins (a REQ, REP, DREQ or SIDR_REQ is about to be
 * made): it goes by its port's policy as it is now.  p->lock held.
 */
static void cm_take_policy(struct cm_id_priv *p)
{
	lockdep_assert_held(&p->lock);
	cm_port_policy(p->av.port, &p->policy);
}

static bool cm_attr_valid(__be16 attr_id)
{
	u16 id = be16_to_cpu(attr_id);

	return id >= CM_ATTR_FIRST && id < CM_ATTR_FIRST + CM_ATTR_COUNT;
}

static unsigned int cm_attr_index(__be16 attr_id)
{
	return be16_to_cpu(attr_id) - CM_ATTR_FIRST;
}

static void cm_count(struct cm_port *port, enum cm_counter_group group,
		     __be16 attr_id, long n)
{
	if (port && cm_attr_valid(attr_id))
		atomic_long_add(n, &port->counters[group][cm_attr_index(attr_id)]);
}

static void cm_count_drop(struct cm_port *port, enum cm_drop_reason why)
{
	atomic_long_inc(&port->drops[why]);
}

/* A received MAD could not be handled for @err, a field's or memory's. */
static void cm_count_failure(struct cm_port *port, int err)
{
	cm_count_drop(port, err == -ENOMEM ? CM_DROP_NOMEM : CM_DROP_FIELD);
}

/* ---------------------------------------------------------------------
 * Devices and address vectors
 */

static void cm_device_release(struct kref *kref)
{
	struct cm_device *cm_dev = container_of(kref, struct cm_device, kref);
	u32 i;

	for (i = 0; i < cm_dev->nports; i++)
		kfree(cm_dev->port[i]);
	kfree(cm_dev);
}

static void cm_device_put(struct cm_device *cm_dev)
{
	kref_put(&cm_dev->kref, cm_device_release);
}

static void cm_av_set_port(struct cm_av *av, struct cm_port *port)
{
	if (av->port == port)
		return;
	if (port)
		kref_get(&port->cm_dev->kref);
	if (av->port)
		cm_device_put(av->port->cm_dev);
	av->port = port;
}

static void cm_ah_put(struct cm_ah *ah);

/* Set @av's address handle to @ah, taking over its reference. */
static void cm_av_set_ah(struct cm_av *av, struct cm_ah *ah)
{
	cm_ah_put(av->ah);
	av->ah = ah;
}

static void cm_av_release(struct cm_av *av)
{
	cm_av_set_ah(av, NULL);
	rdma_destroy_ah_attr(&av->ah_attr);
	cm_av_set_port(av, NULL);
}

/* Move @src into @dst, releasing what @dst held. */
static void cm_av_move(struct cm_av *dst, struct cm_av *src)
{
	cm_av_set_ah(dst, src->ah);
	src->ah = NULL;
	cm_av_set_port(dst, src->port);
	cm_av_set_port(src, NULL);
	rdma_move_ah_attr(&dst->ah_attr, &src->ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->dlid_datapath = src->dlid_datapath;
	dst->timeout = src->timeout;
}

/* The port of @cm_dev a path starts from: the GID attribute's or SGID's. */
static struct cm_port *cm_ib_port_of_path(struct cm_device *cm_dev,
					  struct sa_path_rec *path,
					  const struct ib_gid_attr *sgid_attr)
{
	const struct ib_gid_attr *found;
	u32 num;

	if (sgid_attr) {
		if (cm_dev->ib_device != sgid_attr->device)
			return NULL;
		num = sgid_attr->port_num;
	} else {
		found = rdma_find_gid(cm_dev->ib_device, &path->sgid,
				      sa_conv_pathrec_to_gid_type(path), NULL);
		if (IS_ERR(found))
			return NULL;
		num = found->port_num;
		rdma_put_gid_attr(found);
	}
	return num >= 1 && num <= cm_dev->nports ? cm_dev->port[num - 1] : NULL;
}

/* The address and P_Key index for sending along @path from @port. */
static int cm_ib_ah_from_path(struct cm_port *port, struct sa_path_rec *path,
			      const struct ib_gid_attr *sgid_attr,
			      struct rdma_ah_attr *ah_attr, u16 *pkey_index)
{
	int ret;

	ret = ib_find_cached_pkey(port->cm_dev->ib_device, port->port_num,
				  be16_to_cpu(path->pkey), pkey_index);
	if (ret)
		return ret;
	return ib_init_ah_attr_from_path(port->cm_dev->ib_device,
					 port->port_num, path, ah_attr,
					 sgid_attr);
}

/* The address of the sender of a received MAD. */
static int cm_ib_ah_from_wc(struct cm_port *port,
			    struct ib_mad_recv_wc *recv_wc,
			    struct rdma_ah_attr *ah_attr)
{
	return ib_init_ah_attr_from_wc(port->cm_dev->ib_device, port->port_num,
				       recv_wc->wc, recv_wc->recv_buf.grh,
				       ah_attr);
}

/* The GID at index 0 of @port. */
static int cm_ib_port_gid(struct cm_port *port, union ib_gid *gid)
{
	return rdma_query_gid(port->cm_dev->ib_device, port->port_num, 0, gid);
}

/* The P_Key at @pkey_index of @port, 0 if there is none. */
static u16 cm_ib_pkey(struct cm_port *port, u16 pkey_index)
{
	u16 pkey = 0;

	ib_get_cached_pkey(port->cm_dev->ib_device, port->port_num,
			   pkey_index, &pkey);
	return pkey;
}

/* A send buffer on @agent for one CM MAD to @remote_qpn. */
static struct ib_mad_send_buf *
cm_ib_create_msg(struct ib_mad_agent *agent, u32 remote_qpn, u16 pkey_index)
{
	return ib_create_send_mad(agent, remote_qpn, pkey_index, 0,
				  IB_MGMT_MAD_HDR, IB_MGMT_MAD_DATA,
				  GFP_ATOMIC, IB_MGMT_BASE_VERSION);
}

/**
 * struct cm_transport - what the CM needs from the MAD layer and ib_core
 * @port_of_path: the port of a device a path starts from, or NULL
 * @ah_from_path: address attributes and P_Key index for a path
 * @ah_from_wc: address attributes that answer a received MAD
 * @port_gid: the GID at index 0 of a port
 * @pkey: the P_Key at an index of a port (0 if none)
 * @create_ah: an address handle in the PD of a port's QP1; called with
 *	RDMA_CREATE_AH_SLEEPABLE, may sleep
 * @destroy_ah: releases what @create_ah made; called with flags 0, does
 *	not sleep
 * @create_msg: a send buffer, without address handle, in atomic context
 * @free_msg: releases what @create_msg made
 * @post: hands a send buffer to the MAD layer (the second argument NULL)
 * @cancel: stops the retries of a posted buffer (it still completes)
 * @modify: gives a posted buffer a new response timeout
 * @free_recv: returns a received MAD to the MAD layer
 * @open_port: registers a port's MAD agents and counters and sets the CM
 *	bit in its capability mask; on failure it undoes what it did
 * @close_port: undoes @open_port: nothing is received on the port once it
 *	returns, and its outstanding sends have completed
 *
 * Each cm_device carries the transport of its ports, and the CM calls
 * its operations through the device (port->cm_dev->tp, or cm_msg_dev()
 * for a send buffer).  Real devices carry cm_ib_transport: ib_core's and
 * the MAD layer's own functions where they fit, the cm_ib_*() functions
 * where the CM adds to them.  The KUnit suites give their fake device a
 * transport of their own, so that every send, completion, timeout and
 * received message of that device is under their control while the rest
 * of the module runs unchanged.  These are indirect calls, a few per
 * message; no profile has shown them (or their retpolines) to matter.
 */
struct cm_transport {
	struct cm_port *(*port_of_path)(struct cm_device *cm_dev,
					struct sa_path_rec *path,
					const struct ib_gid_attr *sgid_attr);
	int (*ah_from_path)(struct cm_port *port, struct sa_path_rec *path,
			    const struct ib_gid_attr *sgid_attr,
			    struct rdma_ah_attr *ah_attr, u16 *pkey_index);
	int (*ah_from_wc)(struct cm_port *port, struct ib_mad_recv_wc *recv_wc,
			  struct rdma_ah_attr *ah_attr);
	int (*port_gid)(struct cm_port *port, union ib_gid *gid);
	u16 (*pkey)(struct cm_port *port, u16 pkey_index);
	struct ib_ah *(*create_ah)(struct ib_pd *pd,
				   struct rdma_ah_attr *ah_attr, u32 flags);
	void (*destroy_ah)(struct ib_ah *ah, u32 flags);
	struct ib_mad_send_buf *(*create_msg)(struct ib_mad_agent *agent,
					      u32 remote_qpn, u16 pkey_index);
	void (*free_msg)(struct ib_mad_send_buf *msg);
	int (*post)(struct ib_mad_send_buf *msg,
		    struct ib_mad_send_buf **bad_msg);
	void (*cancel)(struct ib_mad_send_buf *msg);
	int (*modify)(struct ib_mad_send_buf *msg, u32 timeout_ms);
	void (*free_recv)(struct ib_mad_recv_wc *recv_wc);
	int (*open_port)(struct cm_port *port);
	void (*close_port)(struct cm_port *port);
};

static int cm_ib_open_port(struct cm_port *port);
static void cm_ib_close_port(struct cm_port *port);

static const struct cm_transport cm_ib_transport = {
	.port_of_path = cm_ib_port_of_path,
	.ah_from_path = cm_ib_ah_from_path,
	.ah_from_wc = cm_ib_ah_from_wc,
	.port_gid = cm_ib_port_gid,
	.pkey = cm_ib_pkey,
	.create_ah = rdma_create_ah,
	.destroy_ah = rdma_destroy_ah,
	.create_msg = cm_ib_create_msg,
	.free_msg = ib_free_send_mad,
	.post = ib_post_send_mad,
	.cancel = ib_cancel_mad,
	.modify = ib_modify_mad,
	.free_recv = ib_free_recv_mad,
	.open_port = cm_ib_open_port,
	.close_port = cm_ib_close_port,
};

/* The device a send buffer was made on (its agent's context is the port). */
static struct cm_device *cm_msg_dev(struct ib_mad_send_buf *msg)
{
	return ((struct cm_port *)msg->mad_agent->context)->cm_dev;
}

/*
 * A shared address handle for @ah_attr on @port, or an ERR_PTR(): -ENODEV
 * once the device is going away.  May sleep.
 */
static struct cm_ah *cm_ah_create(struct cm_port *port,
				  struct rdma_ah_attr *ah_attr)
{
	struct cm_device *cm_dev = port->cm_dev;
	struct ib_pd *pd = NULL;
	struct cm_ah *ah;
	struct ib_ah *ib_ah;

	might_sleep();
	ah = kmalloc_obj(*ah, GFP_KERNEL);
	if (!ah)
		return ERR_PTR(-ENOMEM);
	/*
	 * QP1 and its PD outlive the agent: the MAD layer frees them after
	 * our device removal, which waits for us (ah_rwsem) and destroys
	 * every handle on the list before it returns.
	 */
	down_read(&cm_dev->ah_rwsem);
	read_lock_irq(&cm_dev->agent_lock);
	if (port->mad_agent && !cm_dev->ahs_gone)
		pd = port->mad_agent->qp->pd;
	read_unlock_irq(&cm_dev->agent_lock);
	ib_ah = ERR_PTR(-ENODEV);
	if (pd)
		ib_ah = cm_dev->tp->create_ah(pd, ah_attr,
					      RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ib_ah)) {
		up_read(&cm_dev->ah_rwsem);
		kfree(ah);
		return ERR_CAST(ib_ah);
	}
	refcount_set(&ah->ref, 1);
	ah->ah = ib_ah;
	ah->port = port;
	kref_get(&cm_dev->kref);
	spin_lock_irq(&cm_dev->ah_lock);
	list_add(&ah->list, &cm_dev->ahs);
	spin_unlock_irq(&cm_dev->ah_lock);
	up_read(&cm_dev->ah_rwsem);
	return ah;
}

/* Drop a reference; the last destroys the handle (in any context). */
static void cm_ah_put(struct cm_ah *ah)
{
	struct cm_device *cm_dev;
	struct ib_ah *ib_ah;
	unsigned long flags;

	if (!ah || !refcount_dec_and_test(&ah->ref))
		return;
	cm_dev = ah->port->cm_dev;
	spin_lock_irqsave(&cm_dev->ah_lock, flags);
	list_del(&ah->list);
	ib_ah = ah->ah;
	spin_unlock_irqrestore(&cm_dev->ah_lock, flags);
	if (ib_ah)
		cm_dev->tp->destroy_ah(ib_ah, 0);
	kfree(ah);
	cm_device_put(cm_dev);
}

/* The CM port a path starts from, on any device, its device referenced. */
static struct cm_port *cm_port_of_path(struct sa_path_rec *path,
				       const struct ib_gid_attr *sgid_attr)
{
	struct cm_device *cm_dev;
	struct cm_port *port = NULL;
	unsigned long flags;

	/* A device on the list is not going away; the reference keeps it. */
	spin_lock_irqsave(&cm.lock, flags);
	list_for_each_entry(cm_dev, &cm.devices, list) {
		port = cm_dev->tp->port_of_path(cm_dev, path, sgid_attr);
		if (port) {
			kref_get(&cm_dev->kref);
			break;
		}
	}
	spin_unlock_irqrestore(&cm.lock, flags);
	return port;
}

/*
 * Fill @av for sending along @path, with its address handle.  May sleep
 * (RoCE route resolution, the handle), so it is called without locks and
 * the result is moved into the id.
 */
static int cm_av_from_path(struct cm_av *av, struct sa_path_rec *path,
			   const struct ib_gid_attr *sgid_attr)
{
	struct rdma_ah_attr ah_attr = {};
	struct cm_port *port;
	struct cm_ah *ah;
	u16 pkey_index;
	int ret;

	port = cm_port_of_path(path, sgid_attr);
	if (!port)
		return -EINVAL;
	ret = port->cm_dev->tp->ah_from_path(port, path, sgid_attr, &ah_attr,
					     &pkey_index);
	if (ret)
		goto out;
	ah = cm_ah_create(port, &ah_attr);
	if (IS_ERR(ah)) {
		rdma_destroy_ah_attr(&ah_attr);
		ret = PTR_ERR(ah);
		goto out;
	}
	cm_av_set_ah(av, ah);
	cm_av_set_port(av, port);
	rdma_move_ah_attr(&av->ah_attr, &ah_attr);
	av->pkey_index = pkey_index;
	av->timeout = path->packet_life_time + 1;
out:
	cm_device_put(port->cm_dev);	/* cm_port_of_path()'s */
	return ret;
}

/*
 * Fill @av to answer the sender of a received MAD, and, if @make_ah, make
 * its address handle (a REQ's id takes the path of the REQ instead and
 * needs one only to reject it: cm_av_make_ah()).  May sleep.
 */
static int cm_av_from_wc(struct cm_av *av, struct cm_port *port,
			 struct ib_mad_recv_wc *recv_wc, bool make_ah)
{
	struct rdma_ah_attr ah_attr = {};
	struct cm_ah *ah = NULL;
	int ret;

	ret = port->cm_dev->tp->ah_from_wc(port, recv_wc, &ah_attr);
	if (ret)
		return ret;
	if (make_ah) {
		ah = cm_ah_create(port, &ah_attr);
		if (IS_ERR(ah)) {
			rdma_destroy_ah_attr(&ah_attr);
			return PTR_ERR(ah);
		}
	}
	cm_av_set_ah(av, ah);
	cm_av_set_port(av, port);
	rdma_move_ah_attr(&av->ah_attr, &ah_attr);
	av->pkey_index = recv_wc->wc->pkey_index;
	return 0;
}

/* Give @av, filled without one, its address handle.  May sleep. */
static void cm_av_make_ah(struct cm_av *av)
{
	struct cm_ah *ah;

	if (av->ah || !av->port)
		return;
	ah = cm_ah_create(av->port, &av->ah_attr);
	if (!IS_ERR(ah))
		cm_av_set_ah(av, ah);
}

/* ---------------------------------------------------------------------
 * Identifiers: allocation, references, lookup tables
 */

static void cm_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(cm.id_cache, container_of(rcu, struct cm_id_priv, rcu));
}

static const struct rhashtable_params cm_listen_params = {
	.head_offset = offsetof(struct cm_id_priv, listen_node),
	.key_offset = offsetof(struct cm_id_priv, listen_key),
	.key_len = offsetofend(struct cm_listen_key, device),
	.automatic_shrinking = true,
};

static const struct rhashtable_params cm_remote_id_params = {
	.head_offset = offsetof(struct cm_peer, node),
	.key_offset = offsetof(struct cm_peer, key),
	.key_len = sizeof(struct cm_remote_key),
	.automatic_shrinking = true,
};

static const struct rhashtable_params cm_remote_qp_params = {
	.head_offset = offsetof(struct cm_id_priv, qp_node),
	.key_offset = offsetof(struct cm_id_priv, qp_key),
	.key_len = sizeof(struct cm_qp_key),
	.automatic_shrinking = true,
};

static const struct rhashtable_params cm_waiting_params = {
	.head_offset = offsetof(struct cm_req_work, waiting_node),
	.key_offset = offsetof(struct cm_req_work, waiting_key),
	.key_len = sizeof(struct cm_remote_key),
	.automatic_shrinking = true,
};

static void cm_unlink_node(struct rb_node *node, struct rb_root *root)
{
	if (!RB_EMPTY_NODE(node)) {
		rb_erase(node, root);
		RB_CLEAR_NODE(node);
	}
}

static void cm_unlink_peer(struct cm_peer *peer)
{
	lockdep_assert_held(&cm.lock);
	if (peer->linked) {
		rhashtable_remove_fast(&cm.remote_ids, &peer->node,
				       cm_remote_id_params);
		peer->linked = false;
	}
}

static void cm_unlink_remote_qp(struct cm_id_priv *p)
{
	lockdep_assert_held(&cm.lock);
	if (p->qp_linked) {
		rhltable_remove(&cm.remote_qps, &p->qp_node,
				cm_remote_qp_params);
		p->qp_linked = false;
	}
}

static void cm_unlink_listen(struct cm_id_priv *p)
{
	lockdep_assert_held(&cm.lock);
	if (p->listening) {
		rhashtable_remove_fast(&cm.listeners, &p->listen_node,
				       cm_listen_params);
		p->listening = false;
	}
}

/* Take @p out of the tables that describe its peer. */
static void cm_unlink_peer_tables(struct cm_id_priv *p)
{
	lockdep_assert_held(&cm.lock);
	cm_unlink_peer(&p->peer);
	cm_unlink_remote_qp(p);
	cm_unlink_node(&p->sidr_node, &cm.sidr_tree);
}

/*
 * @p's consumer has let go of the connection, and with it of its QP
 * (rdma_cm destroys the QP first): the peer may reuse its own QPN for a
 * new connection at once, which is then not a stale one.
 */
static void cm_forget_remote_qp(struct cm_id_priv *p)
{
	unsigned long flags;

	spin_lock_irqsave(&cm.lock, flags);
	cm_unlink_remote_qp(p);
	spin_unlock_irqrestore(&cm.lock, flags);
}

static void cm_unlink_remote(struct cm_id_priv *p)
{
	unsigned long flags;

	spin_lock_irqsave(&cm.lock, flags);
	cm_unlink_peer_tables(p);
	spin_unlock_irqrestore(&cm.lock, flags);
}

/* The index in cm.local_ids of a local comm ID. */
static unsigned long cm_local_index(__be32 local_id)
{
	return be32_to_cpu(local_id) ^ cm.local_id_mask;
}

static void cm_free_id(struct cm_id_priv *p)
{
	unsigned long flags;

	spin_lock_irqsave(&cm.lock, flags);
	cm_unlink_listen(p);
	cm_unlink_peer_tables(p);
	spin_unlock_irqrestore(&cm.lock, flags);
	if (!p->tw_handed_over)
		xa_erase_irq(&cm.local_ids, cm_local_index(p->id.local_id));
	cm_av_release(&p->av);
	cm_av_release(&p->alt_av);
	kfree(p->sent_data);
	call_rcu(&p->rcu, cm_free_rcu);
}

static void cm_get_id(struct cm_id_priv *p)
{
	refcount_inc(&p->refcount);
}

static void cm_put_id(struct cm_id_priv *p)
{
	if (refcount_dec_and_test(&p->refcount))
		cm_free_id(p);
}

static void cm_id_work(struct work_struct *work);
static void cm_timewait_work(struct work_struct *work);

static void cm_init_input(struct cm_input *in, enum cm_input_kind kind)
{
	INIT_LIST_HEAD(&in->list);
	in->kind = kind;
}

/*
 * Allocate an id and its local communication ID.  With @publish false the
 * ID is reserved but lookups do not find the id until cm_publish_id().
 */
static struct cm_id_priv *cm_alloc_id(struct ib_device *device,
				      ib_cm_handler handler, void *context,
				      bool publish, gfp_t gfp)
{
	struct cm_id_priv *p;
	u32 index;
	int ret;

	p = kmem_cache_zalloc(cm.id_cache, gfp);
	if (!p)
		return ERR_PTR(-ENOMEM);

	/* Zeroed: every id starts in IDLE and LAP_UNINIT. */
	BUILD_BUG_ON(IB_CM_IDLE != 0 || IB_CM_LAP_UNINIT != 0);
	p->id.device = device;
	p->id.cm_handler = handler;
	p->id.context = context;
	p->id.remote_cm_qpn = 1;
	p->state_since = jiffies;
	spin_lock_init(&p->lock);
	refcount_set(&p->refcount, 1);
	init_waitqueue_head(&p->cb_done);
	RB_CLEAR_NODE(&p->sidr_node);
	INIT_LIST_HEAD(&p->work_list);
	INIT_WORK(&p->work, cm_id_work);
	cm_init_input(&p->err_in, CM_INPUT_SEND_ERROR);
	cm_init_input(&p->est_in, CM_INPUT_ESTABLISH);
	cm_init_input(&p->tw_in, CM_INPUT_TIMEWAIT);
	INIT_DELAYED_WORK(&p->tw_work, cm_timewait_work);
	/* Until an exchange takes its port's (cm_take_policy()). */
	p->policy = cm_policy_default;

	ret = xa_alloc_cyclic_irq(&cm.local_ids, &index, publish ? p : NULL,
				  xa_limit_32b, &cm.local_id_next, gfp);
	if (ret < 0) {
		kmem_cache_free(cm.id_cache, p);
		return ERR_PTR(ret);
	}
	p->id.local_id = cpu_to_be32(index ^ cm.local_id_mask);
	return p;
}

static void cm_publish_id(struct cm_id_priv *p)
{
	xa_store_irq(&cm.local_ids, cm_local_index(p->id.local_id), p,
		     GFP_ATOMIC);
}

/*
 * Find the id a message is for by our local ID.  @remote_id, unless zero,
 * must match the id's remote ID.  Returns a referenced id or NULL.
 */
static struct cm_id_priv *cm_get_local(__be32 local_id, __be32 remote_id)
{
	struct cm_id_priv *p;

	rcu_read_lock();
	p = xa_load(&cm.local_ids, cm_local_index(local_id));
	if (xa_pointer_tag(p) == CM_XA_RECORD)
		p = NULL;
	if (p && remote_id && READ_ONCE(p->id.remote_id) != remote_id)
		p = NULL;
	if (p && !refcount_inc_not_zero(&p->refcount))
		p = NULL;
	rcu_read_unlock();
	return p;
}

/*
 * The tables are read under RCU; changes are made under cm.lock, which
 * keeps a REQ's checks (repeat, stale, listener) and insertions atomic.
 */

/* The listener of (@dev, @sid): under rcu_read_lock() or cm.lock. */
static struct cm_id_priv *cm_find_listen(struct ib_device *dev, __be64 sid)
{
	struct cm_listen_key key = { .device = dev, .service_id = sid };

	return rhashtable_lookup_fast(&cm.listeners, &key, cm_listen_params);
}

/* The listener of (@dev, @sid), referenced, or NULL. */
static struct cm_id_priv *cm_get_listen(struct ib_device *dev, __be64 sid)
{
	struct cm_id_priv *p;

	rcu_read_lock();
	p = cm_find_listen(dev, sid);
	if (p && !refcount_inc_not_zero(&p->refcount))
		p = NULL;
	rcu_read_unlock();
	return p;
}

static int cm_insert_listen(struct cm_id_priv *p)
{
	int ret;

	CM_KUNIT_STUB(cm_insert_listen, p);
	lockdep_assert_held(&cm.lock);
	p->listen_key.device = p->id.device;
	p->listen_key.service_id = p->id.service_id;
	ret = rhashtable_insert_fast(&cm.listeners, &p->listen_node,
				     cm_listen_params);
	p->listening = !ret;
	return ret;
}

static void cm_remote_key(struct cm_remote_key *key, __be32 rid, __be64 guid)
{
	key->ca_guid = guid;
	key->comm_id = rid;
	key->zero = 0;
}

/* The id of a cm.remote_ids entry, or NULL for a timewait record. */
static struct cm_id_priv *cm_peer_id(struct cm_peer *peer)
{
	return peer->record ? NULL : container_of(peer, struct cm_id_priv, peer);
}

/* The local comm ID of the timewait record of a cm.remote_ids entry. */
static __be32 cm_peer_record_id(struct cm_peer *peer)
{
	return container_of(peer, struct cm_timewait, peer)->local_id;
}

/*
 * The connection with the peer's (@rid, @guid), referenced, or NULL.  When
 * only a timewait record knows the peer, NULL, and *@tw_local (if not
 * NULL) is set to the record's local comm ID; it is left alone otherwise.
 */
static struct cm_id_priv *cm_get_remote_id(__be32 rid, __be64 guid,
					   __be32 *tw_local)
{
	struct cm_remote_key key;
	struct cm_peer *peer;
	struct cm_id_priv *p = NULL;

	cm_remote_key(&key, rid, guid);
	rcu_read_lock();
	peer = rhashtable_lookup(&cm.remote_ids, &key, cm_remote_id_params);
	if (peer) {
		p = cm_peer_id(peer);
		if (!p && tw_local)
			*tw_local = cm_peer_record_id(peer);
		if (p && !refcount_inc_not_zero(&p->refcount))
			p = NULL;
	}
	rcu_read_unlock();
	return p;
}

/*
 * Insert @p by its peer's comm ID and CA GUID.  Returns the entry already
 * there (an id's or a timewait record's), or NULL when @p went in; an
 * ERR_PTR() if it could not.
 */
static struct cm_peer *cm_insert_remote_id(struct cm_id_priv *p)
{
	struct cm_peer *old;

	lockdep_assert_held(&cm.lock);
	cm_remote_key(&p->peer.key, p->id.remote_id, p->remote_ca_guid);
	old = rhashtable_lookup_get_insert_fast(&cm.remote_ids, &p->peer.node,
						cm_remote_id_params);
	if (!old)
		p->peer.linked = true;
	return old;
}

/*
 * Is @q, which uses the same remote QP as a new connection, a live
 * connection rather than a stale one?  Only when the remote end is on
 * this very host can we know: then it is live if its peer id still exists
 * and still points back at it.  Both halves of a loopback connection may
 * use the same QPN (cmtime's "no QPs" pass does), so the remote QP alone
 * does not tell.
 */
static bool cm_loopback_peer_alive(struct cm_id_priv *q)
{
	struct cm_id_priv *peer;
	struct cm_device *cm_dev;
	bool local = false;
	bool alive = false;

	lockdep_assert_held(&cm.lock);
	list_for_each_entry(cm_dev, &cm.devices, list)
		if (cm_dev->ib_device->node_guid == q->remote_ca_guid)
			local = true;
	if (!local)
		return false;

	rcu_read_lock();
	peer = xa_load(&cm.local_ids, cm_local_index(q->id.remote_id));
	if (peer && xa_pointer_tag(peer) != CM_XA_RECORD &&
	    refcount_read(&peer->refcount)) {
		enum ib_cm_state state = READ_ONCE(peer->id.state);
		__be32 rid = READ_ONCE(peer->id.remote_id);

		/*
		 * It points back at us, or it is the initiator whose REQ made
		 * @q and which has not had our REP yet (that takes longer
		 * since a REQ's id is set up off its listener's queue).
		 */
		if (rid == q->id.local_id)
			alive = state != IB_CM_IDLE && state != IB_CM_TIMEWAIT;
		else if (!rid)
			alive = state == IB_CM_REQ_SENT ||
				state == IB_CM_MRA_REQ_RCVD;
	}
	rcu_read_unlock();
	return alive;
}

/*
 * An id other than @except that holds remote QP (@qpn, @guid) and is stale
 * (its remote QP must have lost that connection), or NULL.  cm.lock held.
 */
static struct cm_id_priv *cm_find_stale(__be32 qpn, __be64 guid,
					struct cm_id_priv *except)
{
	struct cm_qp_key key = { .ca_guid = guid, .qpn = qpn };
	struct cm_id_priv *q, *stale = NULL;
	struct rhlist_head *list, *pos;

	lockdep_assert_held(&cm.lock);
	rcu_read_lock();
	list = rhltable_lookup(&cm.remote_qps, &key, cm_remote_qp_params);
	rhl_for_each_entry_rcu(q, pos, list, qp_node) {
		if (q != except && !cm_loopback_peer_alive(q)) {
			stale = q;
			break;
		}
	}
	rcu_read_unlock();
	return stale;
}

/*
 * Insert @p by remote QP.  Returns an id that holds the same remote QP and
 * is stale, leaving @p out of the table, or NULL; an ERR_PTR() if @p could
 * not go in.
 */
static struct cm_id_priv *cm_insert_remote_qp(struct cm_id_priv *p)
{
	struct cm_id_priv *stale;
	int ret;

	lockdep_assert_held(&cm.lock);
	p->qp_key.ca_guid = p->remote_ca_guid;
	p->qp_key.qpn = p->remote_qpn;
	p->qp_key.zero = 0;
	ret = rhltable_insert(&cm.remote_qps, &p->qp_node, cm_remote_qp_params);
	if (ret)
		return ERR_PTR(ret);
	p->qp_linked = true;
	stale = cm_find_stale(p->remote_qpn, p->remote_ca_guid, p);
	if (stale)
		cm_unlink_remote_qp(p);
	return stale;
}

/* sidr_tree: (request ID, source LID, source GID) of received SIDR_REQs. */
static int cm_sidr_cmp(struct rb_node *new, const struct rb_node *exist)
{
	const struct cm_id_priv *a = rb_entry(new, struct cm_id_priv,
					      sidr_node);
	const struct cm_id_priv *b = rb_entry(exist, struct cm_id_priv,
					      sidr_node);
	int c = cmp_int(be32_to_cpu(a->id.remote_id),
			be32_to_cpu(b->id.remote_id));

	if (!c)
		c = cmp_int(a->sidr_lid, b->sidr_lid);
	if (!c)
		c = memcmp(&a->sidr_gid, &b->sidr_gid, sizeof(a->sidr_gid));
	return c;
}

/* Insert @p into cm.sidr_tree; returns the id already there, or NULL. */
static struct cm_id_priv *cm_insert_sidr(struct cm_id_priv *p)
{
	struct rb_node *old;

	lockdep_assert_held(&cm.lock);
	old = rb_find_add(&p->sidr_node, &cm.sidr_tree, cm_sidr_cmp);
	return old ? rb_entry(old, struct cm_id_priv, sidr_node) : NULL;
}

/* ---------------------------------------------------------------------
 * The state machine
 *
 * An id has two state variables of the public struct ib_cm_id: state and
 * lap_state.  Every change of either goes through cm_change_state(), with
 * the id's lock held and the cause of the change (enum cm_cause, in the
 * IBTA's terms).  These two tables are every legal change; one that is
 * not in them is a bug of this file: it is warned about, made anyway (so
 * that the code around it stays consistent), and traced like the others
 * (icm_state).  Documentation/infiniband/ib_cm.rst has the same tables
 * with what is sent and delivered for each row; tools/testing/man checks
 * that the two agree.
 */

struct cm_transition {
	u8 from;
	u8 to;
	u8 cause;
};

#define CM_T(from, to, cause)	{ IB_CM_##from, IB_CM_##to, CM_##cause }

static const struct cm_transition cm_state_table[] = {
	/* listening */
	CM_T(IDLE, LISTEN, LISTEN),
	/* the active side */
	CM_T(IDLE, REQ_SENT, SEND_REQ),
	CM_T(REQ_SENT, MRA_REQ_RCVD, RECV_MRA),
	CM_T(REQ_SENT, REP_RCVD, RECV_REP),
	CM_T(MRA_REQ_RCVD, REP_RCVD, RECV_REP),
	CM_T(REQ_SENT, IDLE, TIMEOUT),
	CM_T(MRA_REQ_RCVD, IDLE, TIMEOUT),
	CM_T(REP_RCVD, MRA_REP_SENT, PREPARE_MRA),
	CM_T(REP_RCVD, ESTABLISHED, SEND_RTU),
	CM_T(MRA_REP_SENT, ESTABLISHED, SEND_RTU),
	/* the passive side */
	CM_T(IDLE, REQ_RCVD, RECV_REQ),
	CM_T(REQ_RCVD, IDLE, DROP),
	CM_T(REQ_RCVD, MRA_REQ_SENT, PREPARE_MRA),
	CM_T(REQ_RCVD, REP_SENT, SEND_REP),
	CM_T(MRA_REQ_SENT, REP_SENT, SEND_REP),
	CM_T(REP_SENT, MRA_REP_RCVD, RECV_MRA),
	CM_T(REP_SENT, ESTABLISHED, RECV_RTU),
	CM_T(MRA_REP_RCVD, ESTABLISHED, RECV_RTU),
	CM_T(REP_SENT, ESTABLISHED, COMM_EST),
	CM_T(MRA_REP_RCVD, ESTABLISHED, COMM_EST),
	CM_T(REP_SENT, IDLE, TIMEOUT),
	CM_T(MRA_REP_RCVD, IDLE, TIMEOUT),
	/* rejecting */
	CM_T(REQ_SENT, IDLE, SEND_REJ),
	CM_T(MRA_REQ_RCVD, IDLE, SEND_REJ),
	CM_T(REQ_RCVD, IDLE, SEND_REJ),
	CM_T(MRA_REQ_SENT, IDLE, SEND_REJ),
	CM_T(REP_RCVD, IDLE, SEND_REJ),
	CM_T(MRA_REP_SENT, IDLE, SEND_REJ),
	CM_T(REP_SENT, TIMEWAIT, SEND_REJ),
	CM_T(MRA_REP_RCVD, TIMEWAIT, SEND_REJ),
	CM_T(REQ_SENT, IDLE, RECV_REJ),
	CM_T(MRA_REQ_RCVD, IDLE, RECV_REJ),
	CM_T(REQ_RCVD, IDLE, RECV_REJ),
	CM_T(MRA_REQ_SENT, IDLE, RECV_REJ),
	CM_T(REP_SENT, IDLE, RECV_REJ),
	CM_T(MRA_REP_RCVD, IDLE, RECV_REJ),
	CM_T(REQ_SENT, TIMEWAIT, RECV_REJ),
	CM_T(MRA_REQ_RCVD, TIMEWAIT, RECV_REJ),
	CM_T(REQ_RCVD, TIMEWAIT, RECV_REJ),
	CM_T(MRA_REQ_SENT, TIMEWAIT, RECV_REJ),
	CM_T(REP_SENT, TIMEWAIT, RECV_REJ),
	CM_T(MRA_REP_RCVD, TIMEWAIT, RECV_REJ),
	CM_T(REP_RCVD, TIMEWAIT, RECV_REJ),
	CM_T(MRA_REP_SENT, TIMEWAIT, RECV_REJ),
	CM_T(DREQ_SENT, TIMEWAIT, RECV_REJ),
	CM_T(ESTABLISHED, TIMEWAIT, RECV_REJ),
	/* disconnecting */
	CM_T(ESTABLISHED, DREQ_SENT, SEND_DREQ),
	CM_T(ESTABLISHED, TIMEWAIT, SEND_DREQ),
	CM_T(ESTABLISHED, DREQ_SENT, STALE_CONN),
	CM_T(ESTABLISHED, TIMEWAIT, STALE_CONN),
	CM_T(ESTABLISHED, DREQ_RCVD, RECV_DREQ),
	CM_T(REP_SENT, DREQ_RCVD, RECV_DREQ),
	CM_T(MRA_REP_RCVD, DREQ_RCVD, RECV_DREQ),
	CM_T(DREQ_SENT, DREQ_RCVD, RECV_DREQ),
	CM_T(DREQ_RCVD, TIMEWAIT, SEND_DREP),
	CM_T(DREQ_SENT, TIMEWAIT, RECV_DREP),
	CM_T(DREQ_RCVD, TIMEWAIT, RECV_DREP),
	CM_T(DREQ_SENT, TIMEWAIT, TIMEOUT),
	CM_T(TIMEWAIT, IDLE, TIMEWAIT_END),
	/* service ID resolution */
	CM_T(IDLE, SIDR_REQ_SENT, SEND_SIDR_REQ),
	CM_T(SIDR_REQ_SENT, IDLE, RECV_SIDR_REP),
	CM_T(SIDR_REQ_SENT, IDLE, TIMEOUT),
	CM_T(IDLE, SIDR_REQ_RCVD, RECV_SIDR_REQ),
	CM_T(SIDR_REQ_RCVD, IDLE, DROP),
	CM_T(SIDR_REQ_RCVD, IDLE, SEND_SIDR_REP),
	/* destroying: ib_destroy_cm_id(), or a handler returning non-zero */
	CM_T(LISTEN, IDLE, DESTROY),
	CM_T(SIDR_REQ_SENT, IDLE, DESTROY),
	CM_T(SIDR_REQ_RCVD, IDLE, DESTROY),
	CM_T(REQ_SENT, IDLE, DESTROY),
	CM_T(MRA_REQ_RCVD, IDLE, DESTROY),
	CM_T(REQ_RCVD, IDLE, DESTROY),
	CM_T(MRA_REQ_SENT, IDLE, DESTROY),
	CM_T(REP_RCVD, IDLE, DESTROY),
	CM_T(MRA_REP_SENT, IDLE, DESTROY),
	CM_T(REP_SENT, TIMEWAIT, DESTROY),
	CM_T(MRA_REP_RCVD, TIMEWAIT, DESTROY),
	CM_T(ESTABLISHED, DREQ_SENT, DESTROY),
	CM_T(ESTABLISHED, TIMEWAIT, DESTROY),
	CM_T(ESTABLISHED, IDLE, DESTROY),
	CM_T(DREQ_RCVD, TIMEWAIT, DESTROY),
	CM_T(DREQ_SENT, TIMEWAIT, RECV_DREQ),
};

static const struct cm_transition cm_lap_table[] = {
	CM_T(LAP_UNINIT, LAP_RCVD, RECV_LAP),
	CM_T(LAP_IDLE, LAP_RCVD, RECV_LAP),
	CM_T(LAP_RCVD, MRA_LAP_SENT, PREPARE_MRA),
	CM_T(LAP_UNINIT, LAP_IDLE, PATH_MIG),
	CM_T(LAP_IDLE, LAP_IDLE, PATH_MIG),
	CM_T(LAP_SENT, MRA_LAP_RCVD, RECV_MRA),
	CM_T(LAP_SENT, LAP_IDLE, RECV_APR),
	CM_T(MRA_LAP_RCVD, LAP_IDLE, RECV_APR),
};

/* The same tables as bit masks: bit TO of [cause][from] is a legal row. */
static u16 cm_state_legal[CM_CAUSES][IB_CM_SIDR_REQ_RCVD + 1];
static u16 cm_lap_legal[CM_CAUSES][IB_CM_MRA_LAP_RCVD + 1];

static void cm_init_transitions(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cm_state_table); i++) {
		const struct cm_transition *t = &cm_state_table[i];

		cm_state_legal[t->cause][t->from] |= BIT(t->to);
	}
	for (i = 0; i < ARRAY_SIZE(cm_lap_table); i++) {
		const struct cm_transition *t = &cm_lap_table[i];

		cm_lap_legal[t->cause][t->from] |= BIT(t->to);
	}
}

/* Change @p's state (or, with @lap, its lap_state) to @to for @cause. */
static void cm_change_state(struct cm_id_priv *p, bool lap, unsigned int to,
			    enum cm_cause cause)
{
	unsigned int from = lap ? (unsigned int)p->id.lap_state :
				  (unsigned int)p->id.state;
	u16 legal = lap ? cm_lap_legal[cause][from] : cm_state_legal[cause][from];

	lockdep_assert_held(&p->lock);
	WARN_RATELIMIT(!(legal & BIT(to)),
		       "ib_cm: illegal %s change %u -> %u (cause %u) of id %08x\n",
		       lap ? "lap_state" : "state", from, to, cause,
		       be32_to_cpu(p->id.local_id));
	trace_icm_state(&p->id, lap, from, to, cause);
	if (lap) {
		WRITE_ONCE(p->id.lap_state, to);
	} else {
		WRITE_ONCE(p->id.state, to);
		p->state_since = jiffies;
	}
}

static void cm_set_state(struct cm_id_priv *p, enum ib_cm_state to,
			 enum cm_cause cause)
{
	cm_change_state(p, false, to, cause);
}

static void cm_set_lap_state(struct cm_id_priv *p, enum ib_cm_lap_state to,
			     enum cm_cause cause)
{
	cm_change_state(p, true, to, cause);
}

/* ---------------------------------------------------------------------
 * Sending MADs
 *
 * msg->context[0] is the id a send belongs to, with a reference, while
 * the id waits for its answer (p->msg); it is cleared, and the reference
 * dropped, by whichever comes first of the send's completion and the id
 * letting go of it (cm_cancel_msg()).  So the id never waits for a
 * completion, and a completion never finds an id that gave up on it.
 * Fire-and-forget messages have NULL there.  msg->context[1] is the
 * struct cm_ah the buffer holds a reference on, its bit 0 set
 * (CM_MSG_RESENT) for a message resent to answer a duplicate (counted as
 * a retry, as the stock module does), its bit 1 (CM_MSG_WINDOW) for a
 * destroyed id's DREQ that counts in its port's @destroy_dreqs, its bit 2
 * (CM_MSG_BACKOFF) for a resend of the backoff schedule (one send and one
 * retry, as each resend of the MAD layer counts).
 */
#define CM_MSG_RESENT	1UL
#define CM_MSG_WINDOW	2UL
#define CM_MSG_BACKOFF	4UL	/* a resend of the backoff schedule */
#define CM_MSG_FLAGS	(CM_MSG_RESENT | CM_MSG_WINDOW | CM_MSG_BACKOFF)

static struct cm_ah *cm_msg_ah(struct ib_mad_send_buf *msg)
{
	return (struct cm_ah *)((unsigned long)msg->context[1] & ~CM_MSG_FLAGS);
}

static bool cm_msg_resent(struct ib_mad_send_buf *msg)
{
	return (unsigned long)msg->context[1] & CM_MSG_RESENT;
}

static bool cm_msg_backoff(struct ib_mad_send_buf *msg)
{
	return (unsigned long)msg->context[1] & CM_MSG_BACKOFF;
}

/* The common header of a CM message; send buffers come zeroed. */
static void cm_init_mad(struct ib_mad_hdr *hdr, __be16 attr_id, __be64 tid)
{
	hdr->base_version = IB_MGMT_BASE_VERSION;
	hdr->mgmt_class = IB_MGMT_CLASS_CM;
	hdr->class_version = CM_CLASS_VERSION;
	hdr->method = IB_MGMT_METHOD_SEND;
	hdr->attr_id = attr_id;
	hdr->tid = tid;
}

/*
 * CM messages all use the SEND method, so the MAD layer never matches
 * them as responses; a transaction ID only has to be unique per sender.
 */
static __be64 cm_new_tid(void)
{
	return cpu_to_be64(atomic64_inc_return(&cm.tid_seq));
}

static void cm_free_msg(struct ib_mad_send_buf *msg)
{
	struct cm_ah *ah = cm_msg_ah(msg);

	if ((unsigned long)msg->context[1] & CM_MSG_WINDOW)
		atomic_dec(&ah->port->destroy_dreqs);
	cm_msg_dev(msg)->tp->free_msg(msg);
	cm_ah_put(ah);
}

/*
 * A send buffer on @agent, one of @port's, addressed by @ah, on which it
 * takes a reference: -ENODEV once the device is going away.  The caller
 * holds the agent lock, which keeps @agent registered meanwhile.
 */
static struct ib_mad_send_buf *__cm_port_msg(struct cm_port *port,
					     struct ib_mad_agent *agent,
					     u32 remote_qpn, u16 pkey_index,
					     struct cm_ah *ah)
{
	struct ib_mad_send_buf *msg;

	lockdep_assert_held(&port->cm_dev->agent_lock);
	/* Without a handle (cm_forget_ahs()) the device is going away. */
	if (!agent || !ah || !READ_ONCE(ah->ah))
		return ERR_PTR(-ENODEV);
	msg = port->cm_dev->tp->create_msg(agent, remote_qpn, pkey_index);
	if (!IS_ERR(msg)) {
		refcount_inc(&ah->ref);
		msg->ah = ah->ah;
		msg->context[0] = NULL;
		msg->context[1] = ah;
	}
	return msg;
}

/*
 * A send buffer on @port's CM agent, or (@send_only) its send-only agent,
 * which has no flow-control window (see struct cm_port), addressed by @ah, on
 * which it takes a reference: -ENODEV once the device is going away.
 * The agent lock keeps the agent registered while the buffer is made.
 * Allocates atomically and creates no address handle: callers may hold
 * spinlocks.
 */
static struct ib_mad_send_buf *cm_port_msg(struct cm_port *port,
					   bool send_only, u32 remote_qpn,
					   u16 pkey_index, struct cm_ah *ah)
{
	struct ib_mad_send_buf *msg;
	unsigned long flags;

	read_lock_irqsave(&port->cm_dev->agent_lock, flags);
	msg = __cm_port_msg(port, send_only ? port->send_agent :
					      port->mad_agent,
			    remote_qpn, pkey_index, ah);
	read_unlock_irqrestore(&port->cm_dev->agent_lock, flags);
	return msg;
}

/*
 * A send buffer addressed along @p's primary path, on the send-only
 * agent if @send_only (REPs, and destroy's DREQs).  Called with p->lock held.
 */
static struct ib_mad_send_buf *cm_alloc_msg(struct cm_id_priv *p,
					    bool send_only)
{
	struct ib_mad_send_buf *msg;

	lockdep_assert_held(&p->lock);
	if (!p->av.port)
		return ERR_PTR(-EINVAL);
	msg = cm_port_msg(p->av.port, send_only, p->id.remote_cm_qpn,
			  p->av.pkey_index, p->av.ah);
	if (!IS_ERR(msg) && !p->tid)
		p->tid = cm_new_tid();
	return msg;
}

/* Post a message that is not retried and whose completion needs no id. */
static int cm_post_oneshot(struct ib_mad_send_buf *msg)
{
	int ret = cm_msg_dev(msg)->tp->post(msg, NULL);

	if (ret)
		cm_free_msg(msg);
	return ret;
}

/*
 * Give @msg, the id's outstanding message, its wait for the answer and its
 * retries for its send number p->msg_resends: with the fixed schedule the
 * MAD layer resends the buffer, with backoff the CM makes a new one for
 * each send (cm_resend_locked()).  p->lock held.
 */
static void cm_time_msg(struct cm_id_priv *p, struct ib_mad_send_buf *msg)
{
	lockdep_assert_held(&p->lock);
	if (p->policy.schedule == CM_SCHEDULE_BACKOFF) {
		msg->timeout_ms = cm_policy_wait_ms(&p->policy,
						    p->msg_timeout_ms,
						    p->msg_resends,
						    get_random_u32());
		msg->retries = 0;
	} else {
		msg->timeout_ms = p->msg_timeout_ms;
		msg->retries = p->msg_retries;
	}
	p->msg_since = jiffies;
	p->msg_wait_ms = msg->timeout_ms;
	p->msg_resends_since = p->msg_resends;
}

/* How often the outstanding message was resent so far.  p->lock held. */
static int cm_msg_resends(struct cm_id_priv *p)
{
	lockdep_assert_held(&p->lock);
	if (p->policy.schedule == CM_SCHEDULE_BACKOFF)
		return p->msg_resends;
	/* The MAD layer counts its resends in the buffer. */
	return p->msg ? READ_ONCE(p->msg->retries) : 0;
}

/*
 * Post @msg, which cm_alloc_msg(@p, @send_only) made, as the id's
 * outstanding message: retried until cancelled, or until it times out and
 * the id hears of it, as p->policy (which the caller took with
 * cm_take_policy() as the exchange began) says.
 */
static int cm_post_tracked(struct cm_id_priv *p, struct ib_mad_send_buf *msg,
			   bool send_only, enum ib_cm_state state)
{
	int ret;

	lockdep_assert_held(&p->lock);
	msg->context[0] = p;
	/* What the backoff schedule's copies are made with. */
	p->msg_pkey_index = p->av.pkey_index;
	p->msg_send_only = send_only;
	/*
	 * A wait the peer set (it said it may take that long to answer) is
	 * not cut: the policy caps only its retries.
	 */
	p->msg_timeout_ms = p->timeout_is_peers ? p->timeout_ms :
			    cm_policy_wait_cap(&p->policy, p->timeout_ms);
	p->msg_retries = cm_policy_retries(&p->policy, p->max_cm_retries);
	p->msg_resends = 0;
	cm_time_msg(p, msg);
	cm_get_id(p);
	ret = cm_msg_dev(msg)->tp->post(msg, NULL);
	if (ret) {
		msg->context[0] = NULL;
		cm_put_id(p);
		cm_free_msg(msg);
		return ret;
	}
	p->msg = msg;
	p->msg_state = state;
	return 0;
}

/*
 * Stop retrying the outstanding message and let go of it; its completion
 * frees it, whenever that comes.  The caller holds a reference of its own.
 */
static void cm_cancel_msg(struct cm_id_priv *p)
{
	struct ib_mad_send_buf *msg = p->msg;

	lockdep_assert_held(&p->lock);
	if (!msg)
		return;
	cm_msg_dev(msg)->tp->cancel(msg);
	p->msg = NULL;
	/* Unless its completion got there first, it no longer holds us. */
	if (xchg(&msg->context[0], NULL) == p)
		cm_put_id(p);
}

/*
 * A send buffer that answers the sender of @recv_wc, with no id.  Building
 * the address from the work completion may sleep: no locks held.  Without
 * memory for it the answer is lost as on the wire (the peer resends what
 * it answers) and counted as a drop.
 */
static struct ib_mad_send_buf *cm_alloc_response(struct cm_port *port,
						 struct ib_mad_recv_wc *recv_wc)
{
	struct rdma_ah_attr ah_attr = {};
	struct ib_mad_send_buf *msg;
	struct cm_ah *ah;
	int ret;

	ret = port->cm_dev->tp->ah_from_wc(port, recv_wc, &ah_attr);
	if (ret) {
		msg = ERR_PTR(ret);
		goto out;
	}
	ah = cm_ah_create(port, &ah_attr);
	rdma_destroy_ah_attr(&ah_attr);
	if (IS_ERR(ah)) {
		msg = ERR_CAST(ah);
		goto out;
	}
	msg = cm_port_msg(port, false, 1, recv_wc->wc->pkey_index, ah);
	cm_ah_put(ah);
out:
	if (PTR_ERR_OR_ZERO(msg) == -ENOMEM)
		cm_count_drop(port, CM_DROP_NOMEM);
	return msg;
}

/*
 * The received message, for the handler of its attribute to read through
 * its own message type (struct cm_req_msg, struct cm_rep_msg ...).
 */
static void *cm_recv_msg(struct cm_work *work)
{
	return work->recv_wc->recv_buf.mad;
}

static const struct ib_mad_hdr *cm_recv_hdr(struct ib_mad_recv_wc *recv_wc)
{
	return &recv_wc->recv_buf.mad->mad_hdr;
}

/* ---------------------------------------------------------------------
 * Message formats we send
 */

static void cm_format_rej(struct cm_rej_msg *rej, struct cm_id_priv *p,
			  enum ib_cm_rej_reason reason, const void *ari,
			  u8 ari_len, const void *data, u8 len)
{
	unsigned int rejected;
	__be32 local = p->id.local_id;

	cm_init_mad(&rej->hdr, CM_REJ_ATTR_ID, p->tid);
	switch (p->id.state) {
	case IB_CM_REQ_RCVD:
		/* Nothing the peer could address us by has been sent yet. */
		local = 0;
		fallthrough;
	case IB_CM_MRA_REQ_SENT:
		rejected = CM_MSG_RESPONSE_REQ;
		break;
	case IB_CM_REP_RCVD:
	case IB_CM_MRA_REP_SENT:
		rejected = CM_MSG_RESPONSE_REP;
		break;
	default:
		rejected = CM_MSG_RESPONSE_OTHER;
		break;
	}
	IBA_SET(CM_REJ_LOCAL_COMM_ID, rej, be32_to_cpu(local));
	IBA_SET(CM_REJ_REMOTE_COMM_ID, rej, be32_to_cpu(p->id.remote_id));
	IBA_SET(CM_REJ_MESSAGE_REJECTED, rej, rejected);
	IBA_SET(CM_REJ_REASON, rej, reason);
	if (ari && ari_len) {
		ari_len = min_t(u8, ari_len, IB_CM_REJ_ARI_LENGTH);
		IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, rej, ari_len);
		IBA_SET_MEM(CM_REJ_ARI, rej, ari, ari_len);
	}
	IBA_SET_MEM(CM_REJ_PRIVATE_DATA, rej, data, len);
}

/* Send a REJ for @p; with p->lock held.  Errors only lose the REJ. */
static void cm_send_rej_locked(struct cm_id_priv *p,
			       enum ib_cm_rej_reason reason, const void *ari,
			       u8 ari_len, const void *data, u8 len)
{
	struct ib_mad_send_buf *msg;

	lockdep_assert_held(&p->lock);

	msg = cm_alloc_msg(p, false);
	if (IS_ERR(msg))
		return;
	cm_format_rej(msg->mad, p, reason, ari, ari_len, data, len);
	trace_icm_send_rej(&p->id, reason);
	cm_post_oneshot(msg);
}

static void cm_format_mra(struct cm_mra_msg *mra, struct cm_id_priv *p,
			  unsigned int mraed)
{
	cm_init_mad(&mra->hdr, CM_MRA_ATTR_ID, p->tid);
	IBA_SET(CM_MRA_LOCAL_COMM_ID, mra, be32_to_cpu(p->id.local_id));
	IBA_SET(CM_MRA_REMOTE_COMM_ID, mra, be32_to_cpu(p->id.remote_id));
	IBA_SET(CM_MRA_MESSAGE_MRAED, mra, mraed);
	IBA_SET(CM_MRA_SERVICE_TIMEOUT, mra, CM_MRA_SERVICE_TIMEOUT_VALUE);
}

static void cm_format_dreq(struct cm_dreq_msg *dreq, struct cm_id_priv *p,
			   const void *data, u8 len)
{
	cm_init_mad(&dreq->hdr, CM_DREQ_ATTR_ID, cm_new_tid());
	IBA_SET(CM_DREQ_LOCAL_COMM_ID, dreq, be32_to_cpu(p->id.local_id));
	IBA_SET(CM_DREQ_REMOTE_COMM_ID, dreq, be32_to_cpu(p->id.remote_id));
	IBA_SET(CM_DREQ_REMOTE_QPN_EECN, dreq, be32_to_cpu(p->remote_qpn));
	IBA_SET_MEM(CM_DREQ_PRIVATE_DATA, dreq, data, len);
}

static void cm_format_drep(struct cm_drep_msg *drep, __be32 local,
			   __be32 remote, __be64 tid, const void *data, u8 len)
{
	cm_init_mad(&drep->hdr, CM_DREP_ATTR_ID, tid);
	IBA_SET(CM_DREP_LOCAL_COMM_ID, drep, be32_to_cpu(local));
	IBA_SET(CM_DREP_REMOTE_COMM_ID, drep, be32_to_cpu(remote));
	IBA_SET_MEM(CM_DREP_PRIVATE_DATA, drep, data, len);
}

static void cm_format_rtu(struct cm_rtu_msg *rtu, struct cm_id_priv *p,
			  const void *data, u8 len)
{
	cm_init_mad(&rtu->hdr, CM_RTU_ATTR_ID, p->tid);
	IBA_SET(CM_RTU_LOCAL_COMM_ID, rtu, be32_to_cpu(p->id.local_id));
	IBA_SET(CM_RTU_REMOTE_COMM_ID, rtu, be32_to_cpu(p->id.remote_id));
	IBA_SET_MEM(CM_RTU_PRIVATE_DATA, rtu, data, len);
}

static void cm_format_sidr_rep(struct cm_sidr_rep_msg *rep,
			       struct cm_id_priv *p,
			       const struct ib_cm_sidr_rep_param *param)
{
	cm_init_mad(&rep->hdr, CM_SIDR_REP_ATTR_ID, p->tid);
	rep->hdr.attr_mod = cpu_to_be32(param->ece.attr_mod);
	IBA_SET(CM_SIDR_REP_REQUESTID, rep, be32_to_cpu(p->id.remote_id));
	IBA_SET(CM_SIDR_REP_STATUS, rep, param->status);
	IBA_SET(CM_SIDR_REP_QPN, rep, param->qp_num);
	IBA_SET(CM_SIDR_REP_VENDOR_ID_H, rep, param->ece.vendor_id >> 8);
	IBA_SET(CM_SIDR_REP_VENDOR_ID_L, rep, param->ece.vendor_id);
	IBA_SET(CM_SIDR_REP_SERVICEID, rep, be64_to_cpu(p->id.service_id));
	IBA_SET(CM_SIDR_REP_Q_KEY, rep, param->qkey);
	if (param->info && param->info_length) {
		IBA_SET(CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH, rep,
			param->info_length);
		IBA_SET_MEM(CM_SIDR_REP_ADDITIONAL_INFORMATION, rep,
			    param->info, param->info_length);
	}
	IBA_SET_MEM(CM_SIDR_REP_PRIVATE_DATA, rep, param->private_data,
		    param->private_data_len);
}

/*
 * Answer a REQ or REP for which we hold no connection (or whose
 * connection is gone) with a REJ.  @local and @remote are the comm IDs
 * the REJ carries: ours as the peer knows it (0 if it does not), and the
 * peer's.
 */
static void cm_issue_rej(struct cm_port *port, struct ib_mad_recv_wc *recv_wc,
			 enum ib_cm_rej_reason reason, unsigned int rejected,
			 u32 local, u32 remote)
{
	struct ib_mad_send_buf *msg;
	struct cm_rej_msg *rej;

	msg = cm_alloc_response(port, recv_wc);
	if (IS_ERR(msg))
		return;
	rej = msg->mad;
	cm_init_mad(&rej->hdr, CM_REJ_ATTR_ID, cm_recv_hdr(recv_wc)->tid);
	IBA_SET(CM_REJ_LOCAL_COMM_ID, rej, local);
	IBA_SET(CM_REJ_REMOTE_COMM_ID, rej, remote);
	IBA_SET(CM_REJ_MESSAGE_REJECTED, rej, rejected);
	IBA_SET(CM_REJ_REASON, rej, reason);
	trace_icm_issue_rej(local, remote);
	cm_post_oneshot(msg);
}

/* Resend an answer to a duplicate; it counts as a retry. */
static void cm_post_resent(struct ib_mad_send_buf *msg)
{
	msg->context[1] = (void *)((unsigned long)msg->context[1] |
				   CM_MSG_RESENT);
	cm_post_oneshot(msg);
}

/* ---------------------------------------------------------------------
 * Inputs and event delivery
 *
 * Each id processes its inputs (received MADs, the failure of its retried
 * send, ib_cm_notify(), the end of timewait) in arrival order, one at a
 * time, in its own work item on cm.wq; different ids run concurrently.
 */

/* Queue @in for @p; the caller holds p->lock. */
static void cm_queue_input_locked(struct cm_id_priv *p, struct cm_input *in)
{
	lockdep_assert_held(&p->lock);
	list_add_tail(&in->list, &p->work_list);
	if (!p->work_busy) {
		p->work_busy = true;
		cm_get_id(p);
		queue_work(cm.wq, &p->work);
	}
}

/* Queue a received MAD for @p, unless @p has too many waiting already. */
static bool cm_queue_recv(struct cm_id_priv *p, struct cm_work *work)
{
	unsigned long flags;
	bool queued;

	spin_lock_irqsave(&p->lock, flags);
	queued = p->nr_recv < CM_ID_BACKLOG;
	if (queued) {
		p->nr_recv++;
		cm_queue_input_locked(p, &work->in);
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return queued;
}

/* Queue one of the inputs the id itself carries, unless it is queued. */
static void cm_queue_own_input_locked(struct cm_id_priv *p,
				      struct cm_input *in)
{
	lockdep_assert_held(&p->lock);
	if (list_empty(&in->list))
		cm_queue_input_locked(p, in);
}

/*
 * Keep the inputs of a new id waiting while its listener hands it over,
 * so that its handler hears of the REQ (or SIDR_REQ) first.
 */
static void cm_hold_work(struct cm_id_priv *p)
{
	spin_lock_irq(&p->lock);
	p->work_busy = true;
	cm_get_id(p);
	spin_unlock_irq(&p->lock);
}

static void cm_release_work(struct cm_id_priv *p)
{
	bool idle;

	spin_lock_irq(&p->lock);
	idle = list_empty(&p->work_list);
	if (idle)
		p->work_busy = false;
	else
		queue_work(cm.wq, &p->work);
	spin_unlock_irq(&p->lock);
	if (idle)
		cm_put_id(p);
}

static void cm_process_input(struct cm_id_priv *p, struct cm_input *in);

static void cm_id_work(struct work_struct *work)
{
	struct cm_id_priv *p = container_of(work, struct cm_id_priv, work);
	struct cm_input *in;

	for (;;) {
		spin_lock_irq(&p->lock);
		in = list_first_entry_or_null(&p->work_list, struct cm_input,
					      list);
		if (!in) {
			p->work_busy = false;
			spin_unlock_irq(&p->lock);
			break;
		}
		list_del_init(&in->list);
		if (in->kind == CM_INPUT_RECV || in->kind == CM_INPUT_HANDOVER)
			p->nr_recv--;
		spin_unlock_irq(&p->lock);
		cm_process_input(p, in);
		cond_resched();
	}
	cm_put_id(p);
}

static void cm_destroy(struct cm_id_priv *p, int err);
static void cm_timewait_compact_locked(struct cm_id_priv *p);
static void cm_wind_down_locked(struct cm_id_priv *p, int err);
static void cm_disconnect_stale(struct cm_id_priv *old);
static void cm_send_sidr_rep_locked(struct cm_id_priv *p,
				    struct ib_cm_sidr_rep_param *param,
				    enum cm_cause cause);

/*
 * @p's callback has returned: no task is in it any more.  If it destroyed
 * @p, finish that now; returns whether it did.  The caller holds a
 * reference of its own, so the wake-up never touches freed memory.
 */
static bool cm_callback_done(struct cm_id_priv *p)
{
	bool deferred;

	spin_lock_irq(&p->lock);
	p->cb_task = NULL;
	deferred = p->destroy_deferred;
	if (deferred) {
		p->destroy_deferred = false;
		cm_wind_down_locked(p, p->destroy_err);
	}
	spin_unlock_irq(&p->lock);
	wake_up_all(&p->cb_done);
	if (deferred)
		cm_put_id(p);	/* the user's reference */
	return deferred;
}

/*
 * Call @p's handler for @event, unless the id was destroyed.  Runs in the
 * work of @p (or, for a new id, of its listener), so events for an id
 * never overlap; that work holds a reference.  A non-zero return destroys
 * the id on the consumer's behalf.
 */
static void cm_deliver(struct cm_id_priv *p, struct ib_cm_event *event)
{
	ib_cm_handler handler;
	int ret;

	spin_lock_irq(&p->lock);
	if (p->destroyed) {
		spin_unlock_irq(&p->lock);
		return;
	}
	p->cb_task = current;
	/* Read afresh: rdma_cm replaces it inside the REQ callback. */
	handler = p->id.cm_handler;
	spin_unlock_irq(&p->lock);

	ret = handler(&p->id, event);

	if (!cm_callback_done(p) && ret) {
		trace_icm_handler_err(event->event);
		cm_destroy(p, ret);
	}
}

/* ---------------------------------------------------------------------
 * Timewait and returning to idle
 */

/* Keep @copy (@len bytes) to resend, instead of the last.  p->lock held. */
static void cm_keep_data_locked(struct cm_id_priv *p, void *copy, u8 len)
{
	lockdep_assert_held(&p->lock);
	kfree(p->sent_data);
	p->sent_data = copy;
	p->sent_data_len = copy ? len : 0;
}

/* Back to IDLE: forget the peer.  p->lock held. */
static void cm_reset_to_idle(struct cm_id_priv *p, enum cm_cause cause)
{
	lockdep_assert_held(&p->lock);
	cm_set_state(p, IB_CM_IDLE, cause);
	cm_unlink_remote(p);
}

/*
 * Enter TIMEWAIT for the path's timeout (at most CM_TIMEWAIT_MAX_IBA, and
 * at most the max_response_timeout of the policy the id's exchange took,
 * p->policy: a destroyed id has no port to ask any more, and a change of
 * the port's policy applies to exchanges that begin after it).
 * The remote QP may be reused at once (the stale check forgets it), but
 * the comm IDs stay known so that late duplicates are answered.  p->lock
 * held.
 */
static void cm_enter_timewait(struct cm_id_priv *p, enum cm_cause cause)
{
	unsigned int t = min_t(unsigned int, p->av.timeout, CM_TIMEWAIT_MAX_IBA);
	unsigned long delay = 0;
	unsigned long flags;

	lockdep_assert_held(&p->lock);
	t = cm_policy_timeout(&p->policy, t);

	cm_cancel_msg(p);
	cm_set_state(p, IB_CM_TIMEWAIT, cause);
	/* A repeated DREQ gets our DREP again, with its data alone. */
	if (cause != CM_SEND_DREP)
		cm_keep_data_locked(p, NULL, 0);

	spin_lock_irqsave(&cm.lock, flags);
	cm_unlink_remote_qp(p);
	if (!p->av.port || !p->av.port->cm_dev->going_down)
		delay = msecs_to_jiffies(cm_iba_to_ms(t));
	spin_unlock_irqrestore(&cm.lock, flags);

	/* A pending end already holds a reference of its own. */
	cm_get_id(p);
	p->tw_due = jiffies + delay;
	if (mod_delayed_work(cm.wq, &p->tw_work, delay))
		cm_put_id(p);
	/* Destroyed while its DREQ was out: only a record stays. */
	if (p->destroyed)
		cm_timewait_compact_locked(p);
}

/*
 * Timewait is over: its end is @p's next input.  A work item, not a
 * timer, so that p->lock is never taken in softirq context (see Locking
 * at the top).
 */
static void cm_timewait_work(struct work_struct *work)
{
	struct cm_id_priv *p = container_of(to_delayed_work(work),
					    struct cm_id_priv, tw_work);

	spin_lock_irq(&p->lock);
	cm_queue_own_input_locked(p, &p->tw_in);
	spin_unlock_irq(&p->lock);
	cm_put_id(p);
}

static void cm_timewait_record_free(struct rcu_head *rcu)
{
	kmem_cache_free(cm.tw_cache, container_of(rcu, struct cm_timewait, rcu));
}

/* The timer of a timewait record fired: the comm IDs are free again. */
static void cm_timewait_record_end(struct timer_list *t)
{
	struct cm_timewait *tw = timer_container_of(tw, t, timer);
	unsigned long flags;

	spin_lock_irqsave(&cm.lock, flags);
	cm_unlink_peer(&tw->peer);
	spin_unlock_irqrestore(&cm.lock, flags);
	xa_lock_irqsave(&cm.local_ids, flags);
	__xa_erase(&cm.local_ids, cm_local_index(tw->local_id));
	xa_unlock_irqrestore(&cm.local_ids, flags);
	atomic_dec(&cm.timewait_records);
	call_rcu(&tw->rcu, cm_timewait_record_free);
}

/* End every timewait record now (module unload; the KUnit suites). */
static void cm_end_timewait_records(void)
{
	struct cm_timewait *tw;
	unsigned long index;

	/* A record's timer never waits for RCU, so it may end inside. */
	rcu_read_lock();
	xa_for_each(&cm.local_ids, index, tw) {
		if (xa_pointer_tag(tw) != CM_XA_RECORD)
			continue;
		tw = xa_untag_pointer(tw);
		if (timer_delete_sync(&tw->timer))
			cm_timewait_record_end(&tw->timer);
	}
	rcu_read_unlock();
}

/*
 * Whether our @local_id (with the peer's @remote_id) names a connection of
 * which only a timewait record is left.
 */
static bool cm_is_timewait_record(__be32 local_id, __be32 remote_id)
{
	struct cm_timewait *tw;
	bool ret;

	rcu_read_lock();
	tw = xa_load(&cm.local_ids, cm_local_index(local_id));
	ret = xa_pointer_tag(tw) == CM_XA_RECORD;
	if (ret) {
		tw = xa_untag_pointer(tw);
		ret = READ_ONCE(tw->peer.key.comm_id) == remote_id;
	}
	rcu_read_unlock();
	return ret;
}

/*
 * @p has been destroyed in TIMEWAIT.  Hand what timewait still needs (the
 * comm IDs, the rest of the wait) to a struct cm_timewait, so that the id
 * is freed as soon as its last reference goes.  Without memory for the
 * record the id itself stays until its timewait ends, as before; past
 * max_timewait records it leaves timewait at once.  p->lock held.
 */
static void cm_timewait_compact_locked(struct cm_id_priv *p)
{
	struct cm_timewait *tw;
	unsigned long flags;

	lockdep_assert_held(&p->lock);
	if (!delayed_work_pending(&p->tw_work))
		return;		/* it is ending already */
	if (atomic_inc_return(&cm.timewait_records) >
	    READ_ONCE(cm_max_timewait)) {
		atomic_dec(&cm.timewait_records);
		/* Only if still pending: its reference is the pending end's. */
		if (cancel_delayed_work(&p->tw_work))
			queue_delayed_work(cm.wq, &p->tw_work, 0);
		pr_warn_ratelimited("more than %u destroyed ids in timewait (max_timewait); ending timewait early\n",
				    READ_ONCE(cm_max_timewait));
		return;
	}
	tw = kmem_cache_zalloc(cm.tw_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (!tw)
		goto keep_id;
	/* Taking the pending end over: its reference on @p goes with it. */
	if (!cancel_delayed_work(&p->tw_work)) {
		kmem_cache_free(cm.tw_cache, tw);
		goto keep_id;
	}
	tw->local_id = p->id.local_id;
	tw->peer.key = p->peer.key;
	tw->peer.record = true;
	timer_setup(&tw->timer, cm_timewait_record_end, 0);

	spin_lock_irqsave(&cm.lock, flags);
	if (p->peer.linked &&
	    !rhashtable_replace_fast(&cm.remote_ids, &p->peer.node,
				     &tw->peer.node, cm_remote_id_params)) {
		p->peer.linked = false;
		tw->peer.linked = true;
	}
	spin_unlock_irqrestore(&cm.lock, flags);

	/* Replacing a present entry allocates nothing. */
	xa_lock_irqsave(&cm.local_ids, flags);
	__xa_store(&cm.local_ids, cm_local_index(tw->local_id),
		   xa_tag_pointer(tw, CM_XA_RECORD), GFP_ATOMIC);
	xa_unlock_irqrestore(&cm.local_ids, flags);
	p->tw_handed_over = true;

	tw->timer.expires = p->tw_due;
	add_timer(&tw->timer);
	cm_put_id(p);	/* the pending end's; the caller holds another */
	return;

keep_id:
	atomic_dec(&cm.timewait_records);
}

static void cm_timewait_end(struct cm_id_priv *p)
{
	struct ib_cm_event event = { .event = IB_CM_TIMEWAIT_EXIT };
	bool notify = false;

	spin_lock_irq(&p->lock);
	if (p->id.state == IB_CM_TIMEWAIT) {
		cm_reset_to_idle(p, CM_TIMEWAIT_END);
		notify = true;
	}
	spin_unlock_irq(&p->lock);
	if (notify)
		cm_deliver(p, &event);
}

/* ---------------------------------------------------------------------
 * Receiving: REQ
 */

/*
 * Whether a REQ carries an alternate path: it names a LID for it (or an
 * OPA GID, whose LIDs do not fit the field), as the stock CM decides.  A
 * RoCE peer that fills in the GID alone offers none.
 */
static bool cm_req_has_alt_path(struct cm_req_msg *req)
{
	return IBA_GET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req) ||
	       ib_is_opa_gid(IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID,
					     req));
}

/* The QP type a REQ asks for, or IB_QPT_MAX when it is not one we know. */
static enum ib_qp_type cm_req_qp_type(struct cm_req_msg *req)
{
	switch (IBA_GET(CM_REQ_TRANSPORT_SERVICE_TYPE, req)) {
	case CM_REQ_TRANSPORT_RC:
		return IB_QPT_RC;
	case CM_REQ_TRANSPORT_UC:
		return IB_QPT_UC;
	case CM_REQ_TRANSPORT_EXTENDED:
		if (IBA_GET(CM_REQ_EXTENDED_TRANSPORT_TYPE, req) ==
		    CM_REQ_EXT_TRANSPORT_XRC)
			return IB_QPT_XRC_TGT;
		fallthrough;
	default:
		return IB_QPT_MAX;
	}
}

static bool cm_mtu_valid(unsigned int mtu)
{
	return mtu >= IB_MTU_256 && mtu <= IB_MTU_4096;
}

/*
 * A path of a REQ that came through an IB router (not subnet-local): the
 * sender may not know the LIDs on our subnet and names them permissive.
 * Then the packet that brought the REQ tells: it came from the router's
 * LID on the SL our subnet uses, to our LID's path bits.
 */
static void cm_path_routed(struct sa_path_rec *path, u16 their_lid,
			   u16 our_lid, struct ib_wc *wc)
{
	if (their_lid == be16_to_cpu(IB_LID_PERMISSIVE)) {
		sa_path_set_dlid(path, wc->slid);
		path->sl = wc->sl;
	}
	if (our_lid == be16_to_cpu(IB_LID_PERMISSIVE))
		sa_path_set_slid(path, wc->dlid_path_bits);
}

/* The primary path of a REQ, seen from our side. */
static void cm_req_primary(struct cm_req_msg *req, struct sa_path_rec *path,
			   struct ib_wc *wc, u8 *ack_timeout)
{
	path->dgid = *IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, req);
	path->sgid = *IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req);
	path->flow_label = cpu_to_be32(IBA_GET(CM_REQ_PRIMARY_FLOW_LABEL, req));
	path->hop_limit = IBA_GET(CM_REQ_PRIMARY_HOP_LIMIT, req);
	path->traffic_class = IBA_GET(CM_REQ_PRIMARY_TRAFFIC_CLASS, req);
	path->sl = IBA_GET(CM_REQ_PRIMARY_SL, req);
	path->rate = IBA_GET(CM_REQ_PRIMARY_PACKET_RATE, req);
	*ack_timeout = IBA_GET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, req);
	if (sa_path_is_roce(path))
		return;
	/* The sender's LID as it reached us, even across routers. */
	sa_path_set_dlid(path, wc->slid);
	sa_path_set_slid(path, IBA_GET(CM_REQ_PRIMARY_REMOTE_PORT_LID, req));
	if (!IBA_GET(CM_REQ_PRIMARY_SUBNET_LOCAL, req))
		cm_path_routed(path,
			       IBA_GET(CM_REQ_PRIMARY_LOCAL_PORT_LID, req),
			       IBA_GET(CM_REQ_PRIMARY_REMOTE_PORT_LID, req), wc);
}

/* The alternate path of a REQ, seen from our side. */
static void cm_req_alternate(struct cm_req_msg *req, struct sa_path_rec *path,
			     struct ib_wc *wc, u8 *ack_timeout)
{
	path->dgid = *IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID, req);
	path->sgid = *IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_REMOTE_PORT_GID, req);
	path->flow_label =
		cpu_to_be32(IBA_GET(CM_REQ_ALTERNATE_FLOW_LABEL, req));
	path->hop_limit = IBA_GET(CM_REQ_ALTERNATE_HOP_LIMIT, req);
	path->traffic_class = IBA_GET(CM_REQ_ALTERNATE_TRAFFIC_CLASS, req);
	path->sl = IBA_GET(CM_REQ_ALTERNATE_SL, req);
	path->rate = IBA_GET(CM_REQ_ALTERNATE_PACKET_RATE, req);
	*ack_timeout = IBA_GET(CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, req);
	if (sa_path_is_roce(path))
		return;
	sa_path_set_dlid(path, IBA_GET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req));
	sa_path_set_slid(path, IBA_GET(CM_REQ_ALTERNATE_REMOTE_PORT_LID, req));
	if (!IBA_GET(CM_REQ_ALTERNATE_SUBNET_LOCAL, req))
		cm_path_routed(path,
			       IBA_GET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req),
			       IBA_GET(CM_REQ_ALTERNATE_REMOTE_PORT_LID, req),
			       wc);
}

/* Turn the path fields of a REQ, seen from our side, into a path record. */
static void cm_path_from_req(struct cm_req_msg *req, struct sa_path_rec *path,
			     bool alt, struct ib_wc *wc)
{
	u8 ack_timeout;

	if (alt)
		cm_req_alternate(req, path, wc, &ack_timeout);
	else
		cm_req_primary(req, path, wc, &ack_timeout);
	path->reversible = 1;
	path->pkey = cpu_to_be16(IBA_GET(CM_REQ_PARTITION_KEY, req));
	path->mtu_selector = IB_SA_EQ;
	path->mtu = IBA_GET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req);
	path->rate_selector = IB_SA_EQ;
	path->packet_life_time_selector = IB_SA_EQ;
	/* The REQ carries the ACK timeout, one more than the lifetime. */
	path->packet_life_time = ack_timeout ? ack_timeout - 1 : 0;
	path->service_id = cpu_to_be64(IBA_GET(CM_REQ_SERVICE_ID, req));
	if (sa_path_is_roce(path))
		path->roce.route_resolved = false;
}

/* Checks that make a REQ unusable; it is dropped and counted. */
static bool cm_req_valid(struct cm_req_msg *req)
{
	return cm_req_qp_type(req) != IB_QPT_MAX &&
	       cm_mtu_valid(IBA_GET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req)) &&
	       IBA_GET(CM_REQ_LOCAL_COMM_ID, req) != 0;
}

/*
 * A REQ for a connection of which only a timewait record is left: it is
 * stale, and answered as an id in TIMEWAIT answers it (cm_dup_req()).
 */
static void cm_dup_req_record(struct cm_port *port,
			      struct ib_mad_recv_wc *recv_wc, __be32 tw_local)
{
	struct cm_req_msg *req = (struct cm_req_msg *)recv_wc->recv_buf.mad;

	cm_count(port, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID, 1);
	cm_issue_rej(port, recv_wc, IB_CM_REJ_STALE_CONN, CM_MSG_RESPONSE_OTHER,
		     be32_to_cpu(tw_local), IBA_GET(CM_REQ_LOCAL_COMM_ID, req));
}

/*
 * A REQ we already know: answer as its state requires.  Most states need
 * no answer, and making one may wait for the sender's address: the state
 * is looked at first.
 */
static void cm_dup_req(struct cm_id_priv *p, struct cm_work *work)
{
	enum ib_cm_state state = READ_ONCE(p->id.state);
	struct ib_mad_send_buf *msg;

	cm_count(work->port, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID, 1);
	if (state != IB_CM_MRA_REQ_SENT && state != IB_CM_TIMEWAIT)
		return;
	msg = cm_alloc_response(work->port, work->recv_wc);
	if (IS_ERR(msg))
		return;

	spin_lock_irq(&p->lock);
	switch (p->id.state) {
	case IB_CM_MRA_REQ_SENT:
		cm_format_mra(msg->mad, p, CM_MSG_RESPONSE_REQ);
		trace_icm_send_mra(&p->id);
		break;
	case IB_CM_TIMEWAIT:
		cm_format_rej(msg->mad, p, IB_CM_REJ_STALE_CONN, NULL, 0, NULL,
			      0);
		break;
	default:
		spin_unlock_irq(&p->lock);
		cm_free_msg(msg);
		return;
	}
	trace_icm_send_dup_req(&p->id);
	spin_unlock_irq(&p->lock);
	cm_post_resent(msg);
}

static struct cm_req_work *cm_req_work(struct cm_work *work)
{
	return container_of(work, struct cm_req_work, work);
}

/* A REQ and a SIDR_REQ come in a struct cm_req_work. */
static bool cm_is_req_work(struct ib_mad_recv_wc *recv_wc)
{
	__be16 attr_id = cm_recv_hdr(recv_wc)->attr_id;

	return attr_id == CM_REQ_ATTR_ID || attr_id == CM_SIDR_REQ_ATTR_ID;
}

/*
 * A REQ goes onto its listener's queue, or onto its port's answer queue
 * (a listener may come for it meanwhile): until it is taken up, a REJ
 * TIMEOUT from its sender finds it in cm.waiting_reqs.  A repeat of a REQ
 * that is there already stays out.
 */
static void cm_req_waits(struct cm_req_work *rw)
{
	struct cm_req_msg *req = cm_recv_msg(&rw->work);
	unsigned long flags;

	if (rw->waiting)
		return;
	cm_remote_key(&rw->waiting_key,
		      cpu_to_be32(IBA_GET(CM_REQ_LOCAL_COMM_ID, req)),
		      cpu_to_be64(IBA_GET(CM_REQ_LOCAL_CA_GUID, req)));
	spin_lock_irqsave(&cm.lock, flags);
	rw->waiting = !rhashtable_lookup_insert_fast(&cm.waiting_reqs,
						     &rw->waiting_node,
						     cm_waiting_params);
	spin_unlock_irqrestore(&cm.lock, flags);
}

/*
 * The REQ of @rw is taken up, or dropped: it leaves cm.waiting_reqs.
 * Returns the REJ that waited with it, for cm_pass_on_rej().  cm.lock
 * held.
 */
static struct cm_work *cm_req_taken(struct cm_req_work *rw)
{
	struct cm_work *rej = rw->rej;

	lockdep_assert_held(&cm.lock);
	if (rw->waiting) {
		rhashtable_remove_fast(&cm.waiting_reqs, &rw->waiting_node,
				       cm_waiting_params);
		rw->waiting = false;
	}
	rw->rej = NULL;
	return rej;
}

static void cm_queue_found(struct cm_id_priv *p, struct cm_work *work);
static void cm_free_work(struct cm_work *work);

/*
 * A REJ TIMEOUT that waited with its sender's REQ goes where the REQ led
 * (to the connection it made or repeats), found again by the sender's
 * comm ID and CA GUID; if it led nowhere, it is dropped as unmatched.
 */
static void cm_pass_on_rej(struct cm_work *rej)
{
	struct cm_rej_msg *msg;
	struct cm_id_priv *p;
	__be64 guid;

	if (!rej)
		return;
	msg = cm_recv_msg(rej);
	memcpy(&guid, IBA_GET_MEM_PTR(CM_REJ_ARI, msg), sizeof(guid));
	p = cm_get_remote_id(cpu_to_be32(IBA_GET(CM_REJ_LOCAL_COMM_ID, msg)),
			     guid, NULL);
	if (!p) {
		trace_icm_rej_unknown_err(NULL);
		cm_count_drop(rej->port, CM_DROP_UNMATCHED);
		cm_free_work(rej);
		return;
	}
	cm_queue_found(p, rej);
	cm_put_id(p);
}

/*
 * Match a new REQ, queued on @listen, against what we know, and say what
 * it is; its answer, which may sleep, is left to cm_req_setup(), with the
 * id it repeats or makes stale in @rw->old (referenced).  @p is the new,
 * still private, id; it stays in the tables only for CM_REQ_NEW.  The REQ
 * leaves cm.waiting_reqs as @p goes into cm.remote_ids, so that a REJ
 * TIMEOUT always finds one of them; the REJ that waited with it is left
 * in *@rej.
 */
static enum cm_req_match cm_match_req(struct cm_req_work *rw,
				      struct cm_id_priv *p,
				      struct cm_id_priv *listen,
				      struct cm_work **rej)
{
	enum cm_req_match match = CM_REQ_NEW;
	struct cm_id_priv *old = NULL;
	struct cm_peer *peer;

	spin_lock_irq(&cm.lock);
	peer = cm_insert_remote_id(p);
	*rej = cm_req_taken(rw);
	if (IS_ERR(peer)) {
		match = CM_REQ_NOMEM;
	} else if (peer) {
		match = CM_REQ_REPEAT;
		old = cm_peer_id(peer);
		if (!old)
			rw->tw_local = cm_peer_record_id(peer);
	} else {
		old = cm_insert_remote_qp(p);
		if (IS_ERR(old)) {
			match = CM_REQ_NOMEM;
			old = NULL;
		} else if (old) {
			match = CM_REQ_STALE;
		} else if (!listen->listening) {
			/* The listener went while the REQ waited for it. */
			match = CM_REQ_UNLISTENED;
		}
		if (match != CM_REQ_NEW)
			cm_unlink_peer_tables(p);
	}
	if (old && !refcount_inc_not_zero(&old->refcount))
		old = NULL;
	rw->old = old;
	spin_unlock_irq(&cm.lock);
	if (match == CM_REQ_NOMEM)
		cm_count_drop(rw->work.port, CM_DROP_NOMEM);
	return match;
}

/*
 * Answer a REQ that starts no connection, as cm_match_req() found it.
 * May sleep (the answer's address handle).
 */
static void cm_answer_req(struct cm_req_work *rw)
{
	struct cm_req_msg *req = cm_recv_msg(&rw->work);
	u32 remote_id = IBA_GET(CM_REQ_LOCAL_COMM_ID, req);
	struct cm_port *port = rw->work.port;
	struct ib_mad_recv_wc *recv_wc = rw->work.recv_wc;

	switch (rw->match) {
	case CM_REQ_REPEAT:
		if (rw->old)
			cm_dup_req(rw->old, &rw->work);
		else if (rw->tw_local)
			cm_dup_req_record(port, recv_wc, rw->tw_local);
		break;
	case CM_REQ_STALE:
		trace_icm_staleconn_err(0, remote_id);
		cm_issue_rej(port, recv_wc, IB_CM_REJ_STALE_CONN,
			     CM_MSG_RESPONSE_REQ, 0, remote_id);
		if (rw->old)
			cm_disconnect_stale(rw->old);
		break;
	case CM_REQ_UNLISTENED:
		trace_icm_no_listener_err(NULL);
		cm_issue_rej(port, recv_wc, IB_CM_REJ_INVALID_SERVICE_ID,
			     CM_MSG_RESPONSE_REQ, 0, remote_id);
		break;
	default:
		break;
	}
}

/*
 * Build the paths of a new connection from its REQ and set up the id's
 * address vectors for them.  On failure the REQ has been rejected.
 */
static int cm_req_paths(struct cm_work *work, struct cm_id_priv *p,
			struct sa_path_rec *path)
{
	struct cm_req_msg *req = cm_recv_msg(work);
	const struct ib_global_route *grh;
	const struct ib_gid_attr *gid_attr;
	bool alt = cm_req_has_alt_path(req);
	int ret;

	memset(path, 0, 2 * sizeof(*path));
	grh = rdma_ah_read_grh(&p->av.ah_attr);
	gid_attr = grh->sgid_attr;
	if (p->av.ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE && gid_attr)
		path[0].rec_type =
			sa_conv_gid_to_pathrec_type(gid_attr->gid_type);
	else
		path[0].rec_type = SA_PATH_REC_TYPE_IB;
	path[1].rec_type = path[0].rec_type;

	cm_path_from_req(req, &path[0], false, work->recv_wc->wc);
	if (alt)
		cm_path_from_req(req, &path[1], true, work->recv_wc->wc);
	if (p->av.ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE)
		sa_path_set_dmac(&path[0], p->av.ah_attr.roce.dmac);
	path[0].hop_limit = grh->hop_limit;

	ret = cm_av_from_path(&p->av, &path[0], gid_attr);
	if (ret == -ENOMEM) {
		/* Not the path's fault: no REJ, the peer resends the REQ. */
		cm_count_failure(work->port, ret);
		return ret;
	}
	if (ret) {
		union ib_gid gid;

		/* Tell the peer which GID we would have answered from. */
		cm_av_make_ah(&p->av);
		if (work->port->cm_dev->tp->port_gid(work->port, &gid))
			ib_send_cm_rej(&p->id, IB_CM_REJ_INVALID_GID, NULL, 0,
				       NULL, 0);
		else
			ib_send_cm_rej(&p->id, IB_CM_REJ_INVALID_GID, &gid,
				       sizeof(gid), NULL, 0);
		return ret;
	}
	if (p->av.ah_attr.type == RDMA_AH_ATTR_TYPE_IB)
		p->av.dlid_datapath =
			IBA_GET(CM_REQ_PRIMARY_LOCAL_PORT_LID, req);

	if (alt) {
		ret = cm_av_from_path(&p->alt_av, &path[1], NULL);
		if (ret == -ENOMEM) {
			cm_count_failure(work->port, ret);
			return ret;
		}
		if (ret) {
			ib_send_cm_rej(&p->id, IB_CM_REJ_INVALID_ALT_GID,
				       &path[0].sgid,
				       sizeof(path[0].sgid), NULL, 0);
			return ret;
		}
	}
	return 0;
}

static u16 cm_bth_pkey(struct cm_work *work)
{
	return work->port->cm_dev->tp->pkey(work->port,
					  work->recv_wc->wc->pkey_index);
}

static void cm_format_req_event(struct cm_work *work, struct cm_id_priv *p,
				struct cm_id_priv *listen,
				struct sa_path_rec *path,
				struct ib_cm_event *event)
{
	struct cm_req_msg *req = cm_recv_msg(work);
	struct ib_cm_req_event_param *param = &event->param.req_rcvd;

	event->event = IB_CM_REQ_RECEIVED;
	param->listen_id = &listen->id;
	param->bth_pkey = cm_bth_pkey(work);
	param->port = work->port->port_num;
	param->primary_path = &path[0];
	param->alternate_path = cm_req_has_alt_path(req) ? &path[1] :
							   NULL;
	param->ppath_sgid_attr = p->av.ah_attr.grh.sgid_attr;
	param->remote_ca_guid = p->remote_ca_guid;
	param->remote_qkey = IBA_GET(CM_REQ_LOCAL_Q_KEY, req);
	param->remote_qpn = be32_to_cpu(p->remote_qpn);
	param->qp_type = p->qp_type;
	param->starting_psn = IBA_GET(CM_REQ_STARTING_PSN, req);
	param->responder_resources = IBA_GET(CM_REQ_INITIATOR_DEPTH, req);
	param->initiator_depth = IBA_GET(CM_REQ_RESPONDER_RESOURCES, req);
	param->local_cm_response_timeout =
		IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req);
	param->flow_control = IBA_GET(CM_REQ_END_TO_END_FLOW_CONTROL, req);
	param->remote_cm_response_timeout =
		IBA_GET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, req);
	param->retry_count = IBA_GET(CM_REQ_RETRY_COUNT, req);
	param->rnr_retry_count = IBA_GET(CM_REQ_RNR_RETRY_COUNT, req);
	param->srq = IBA_GET(CM_REQ_SRQ, req);
	param->ece.vendor_id = IBA_GET(CM_REQ_VENDOR_ID, req);
	param->ece.attr_mod = be32_to_cpu(req->hdr.attr_mod);
	event->private_data = IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, req);
}

/*
 * A new id that its consumer never saw goes (whatever the peer had to be
 * told has been sent), and the inputs held for it (cm_hold_work()) run:
 * it is destroyed first, so that they find it so and call no handler (it
 * has none yet).
 */
static void cm_drop_new(struct cm_id_priv *p)
{
	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_IDLE)
		cm_set_state(p, IB_CM_IDLE, CM_DROP);
	p->destroyed = true;
	spin_unlock_irq(&p->lock);
	/* A repeat of its REQ is a new one now. */
	cm_unlink_remote(p);
	cm_put_id(p);		/* the consumer's, who never had it */
	cm_release_work(p);	/* the hold's */
}

/*
 * Hand a new id to the consumer through its listener's handler.  The
 * listener counts as being in a callback meanwhile, so destroying it
 * waits for this to finish.
 */
static void cm_deliver_new(struct cm_id_priv *p, struct cm_id_priv *listen,
			   struct ib_cm_event *event)
{
	spin_lock_irq(&listen->lock);
	if (listen->destroyed) {
		spin_unlock_irq(&listen->lock);
		cm_destroy(p, 0);
		return;
	}
	listen->cb_task = current;
	p->id.cm_handler = listen->id.cm_handler;
	p->id.context = listen->id.context;
	spin_unlock_irq(&listen->lock);

	cm_deliver(p, event);
	cm_callback_done(listen);
}

/*
 * A REQ for which no id was found, on its port's answer queue: reject it
 * (a remote QP that is still bound to a connection makes that connection
 * stale first, as with the stock CM).
 */
static void cm_reject_unlistened(struct cm_port *port,
				 struct ib_mad_recv_wc *recv_wc)
{
	struct cm_req_msg *req = (struct cm_req_msg *)recv_wc->recv_buf.mad;
	u32 remote_id = IBA_GET(CM_REQ_LOCAL_COMM_ID, req);
	struct cm_id_priv *stale;
	unsigned long flags;

	spin_lock_irqsave(&cm.lock, flags);
	stale = cm_find_stale(cpu_to_be32(IBA_GET(CM_REQ_LOCAL_QPN, req)),
			      cpu_to_be64(IBA_GET(CM_REQ_LOCAL_CA_GUID, req)),
			      NULL);
	if (stale && !refcount_inc_not_zero(&stale->refcount))
		stale = NULL;
	spin_unlock_irqrestore(&cm.lock, flags);
	if (stale) {
		trace_icm_staleconn_err(0, remote_id);
		cm_issue_rej(port, recv_wc, IB_CM_REJ_STALE_CONN,
			     CM_MSG_RESPONSE_REQ, 0, remote_id);
		cm_disconnect_stale(stale);
		cm_put_id(stale);
		return;
	}
	trace_icm_no_listener_err(NULL);
	cm_issue_rej(port, recv_wc, IB_CM_REJ_INVALID_SERVICE_ID,
		     CM_MSG_RESPONSE_REQ, 0, remote_id);
}

/*
 * A REQ is queued on the connection it repeats, if there is one, else on
 * the listener of its service ID.  Without either it needs an answer:
 * ERR_PTR(-EAGAIN) unless @answer (cm_answer()), which sends it.
 */
static struct cm_id_priv *cm_get_req(struct cm_port *port,
				     struct ib_mad_recv_wc *recv_wc,
				     bool answer)
{
	struct cm_req_msg *req = (struct cm_req_msg *)recv_wc->recv_buf.mad;
	struct cm_id_priv *p;
	__be32 tw_local = 0;

	if (!cm_req_valid(req))
		return ERR_PTR(-EINVAL);
	p = cm_get_remote_id(cpu_to_be32(IBA_GET(CM_REQ_LOCAL_COMM_ID, req)),
			     cpu_to_be64(IBA_GET(CM_REQ_LOCAL_CA_GUID, req)),
			     &tw_local);
	if (!p && !tw_local)
		p = cm_get_listen(port->cm_dev->ib_device,
				  cpu_to_be64(IBA_GET(CM_REQ_SERVICE_ID, req)));
	if (p)
		return p;
	if (!answer)
		return ERR_PTR(-EAGAIN);
	if (tw_local)
		cm_dup_req_record(port, recv_wc, tw_local);
	else
		cm_reject_unlistened(port, recv_wc);
	return ERR_PTR(-ENOENT);
}

/*
 * Set the new id @p (if any) of @rw's REQ or SIDR_REQ up on cm.setup_wq,
 * or answer the REQ there.  A new id counts as waiting on @listen until
 * it is handed over.
 */
static void cm_queue_setup(struct cm_req_work *rw, struct cm_id_priv *listen,
			   struct cm_id_priv *p)
{
	rw->id = p;
	rw->taken = jiffies;
	if (p) {
		rw->listen = listen;
		cm_get_id(listen);
		spin_lock_irq(&listen->lock);
		listen->nr_recv++;
		spin_unlock_irq(&listen->lock);
	}
	queue_work(cm.setup_wq, &rw->setup);
}

/*
 * A REQ or SIDR_REQ for service @sid that waited on @listen's queue while
 * @listen was destroyed and another listener made for the service: queue
 * it on the new one, which takes @work over.  False if there is none.
 */
static bool cm_pass_to_new_listener(struct cm_id_priv *listen,
				    struct cm_work *work, __be64 sid)
{
	struct cm_id_priv *p;
	bool passed;

	if (READ_ONCE(listen->listening))
		return false;
	p = cm_get_listen(work->port->cm_dev->ib_device, sid);
	if (!p)
		return false;
	passed = p != listen;
	if (passed)
		cm_queue_found(p, work);
	cm_put_id(p);
	return passed;
}

/*
 * A REQ on its listener's queue (see struct cm_req_work): match it and
 * make its id; cm_req_setup() then sets the id up, or answers the REQ,
 * off this queue.  Takes @work over.
 */
static void cm_take_req(struct cm_id_priv *listen, struct cm_work *work)
{
	struct cm_req_work *rw = cm_req_work(work);
	struct cm_req_msg *req = cm_recv_msg(work);
	struct cm_port *port = work->port;
	struct cm_work *rej = NULL;
	struct cm_id_priv *p;

	if (cm_pass_to_new_listener(listen, work,
				    cpu_to_be64(IBA_GET(CM_REQ_SERVICE_ID, req))))
		return;

	p = cm_alloc_id(port->cm_dev->ib_device, NULL, NULL, false,
			GFP_KERNEL);
	if (IS_ERR(p)) {
		/* Stay silent: the peer retries the REQ. */
		cm_count_drop(port, CM_DROP_NOMEM);
		cm_free_work(work);
		return;
	}

	p->id.remote_id = cpu_to_be32(IBA_GET(CM_REQ_LOCAL_COMM_ID, req));
	p->id.service_id = cpu_to_be64(IBA_GET(CM_REQ_SERVICE_ID, req));
	p->tid = req->hdr.tid;
	p->timeout_ms =
		cm_iba_to_ms(IBA_GET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, req));
	p->timeout_is_peers = true;
	p->max_cm_retries = IBA_GET(CM_REQ_MAX_CM_RETRIES, req);
	p->remote_qpn = cpu_to_be32(IBA_GET(CM_REQ_LOCAL_QPN, req));
	p->remote_ca_guid = cpu_to_be64(IBA_GET(CM_REQ_LOCAL_CA_GUID, req));
	p->initiator_depth = IBA_GET(CM_REQ_RESPONDER_RESOURCES, req);
	p->responder_resources = IBA_GET(CM_REQ_INITIATOR_DEPTH, req);
	p->path_mtu = IBA_GET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req);
	p->pkey = cpu_to_be16(IBA_GET(CM_REQ_PARTITION_KEY, req));
	p->sq_psn = cpu_to_be32(IBA_GET(CM_REQ_STARTING_PSN, req));
	p->retry_count = IBA_GET(CM_REQ_RETRY_COUNT, req);
	p->rnr_retry_count = IBA_GET(CM_REQ_RNR_RETRY_COUNT, req);
	p->qp_type = cm_req_qp_type(req);
	spin_lock_irq(&p->lock);
	cm_set_state(p, IB_CM_REQ_RCVD, CM_RECV_REQ);
	spin_unlock_irq(&p->lock);
	/* Its own inputs wait until it has been handed over. */
	cm_hold_work(p);

	rw->match = cm_match_req(rw, p, listen, &rej);
	if (rw->match != CM_REQ_NEW) {
		cm_drop_new(p);
		p = NULL;
	}
	if (rw->match == CM_REQ_NOMEM)
		cm_free_work(work);
	else
		cm_queue_setup(rw, listen, p);
	cm_pass_on_rej(rej);
}

/*
 * How long a REQ's sender waits for its answer (see CM_SETUP_MAX); a
 * SIDR_REQ does not say, and gets CM_ANSWER_MAX_AGE.
 */
static unsigned long cm_req_patience(struct cm_work *work)
{
	struct cm_req_msg *req = cm_recv_msg(work);
	unsigned int ms;

	if (req->hdr.attr_id != CM_REQ_ATTR_ID)
		return CM_ANSWER_MAX_AGE;
	ms = cm_iba_to_ms(IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req));
	return max_t(unsigned long, msecs_to_jiffies(ms), CM_ANSWER_MAX_AGE);
}

/* A new id that was not set up: it goes, and its listener lets go of it. */
static void cm_req_not_set_up(struct cm_req_work *rw)
{
	struct cm_id_priv *listen = rw->listen;

	spin_lock_irq(&listen->lock);
	listen->nr_recv--;
	spin_unlock_irq(&listen->lock);
	cm_drop_new(rw->id);
	cm_put_id(listen);
}

/*
 * On cm.setup_wq, where sleeping holds up no listener: the address
 * vectors of a REQ's new id (the listener then hands it over, in order
 * with its other inputs: cm_hand_over()), or the REQ's answer.  A REQ
 * that waited too long for its turn is dropped unanswered.
 */
static void cm_req_setup(struct work_struct *w)
{
	struct cm_req_work *rw = container_of(w, struct cm_req_work, setup);
	struct cm_id_priv *listen = rw->listen;
	struct cm_work *work = &rw->work;
	struct cm_port *port = work->port;
	struct cm_id_priv *p = rw->id;
	bool sidr = cm_recv_hdr(work->recv_wc)->attr_id == CM_SIDR_REQ_ATTR_ID;
	int ret;

	if (time_after(jiffies, rw->taken + cm_req_patience(work))) {
		cm_count_drop(port, CM_DROP_BACKLOG);
		goto done;
	}
	if (!p) {
		cm_answer_req(rw);
		goto done;
	}
	/* A REQ's path needs an address handle only if it fails. */
	ret = cm_av_from_wc(&p->av, port, work->recv_wc, sidr);
	if (ret) {
		cm_count_failure(port, ret);
		goto done;
	}
	if (!sidr && cm_req_paths(work, p, rw->path))
		goto done;

	work->in.kind = CM_INPUT_HANDOVER;
	spin_lock_irq(&listen->lock);
	cm_queue_input_locked(listen, &work->in);
	spin_unlock_irq(&listen->lock);
	return;

done:
	if (p)
		cm_req_not_set_up(rw);
	if (rw->old)
		cm_put_id(rw->old);
	cm_free_work(work);
}

static void cm_hand_over_sidr(struct cm_id_priv *listen, struct cm_work *work,
			      struct cm_id_priv *p);

/* On @listen's queue: hand the id that @rw set up to the consumer. */
static void cm_hand_over(struct cm_id_priv *listen, struct cm_req_work *rw)
{
	struct cm_id_priv *p = rw->id;
	struct ib_cm_event event = {};

	if (cm_recv_hdr(rw->work.recv_wc)->attr_id == CM_SIDR_REQ_ATTR_ID) {
		cm_hand_over_sidr(listen, &rw->work, p);
	} else {
		cm_format_req_event(&rw->work, p, listen, rw->path, &event);
		cm_publish_id(p);
		cm_deliver_new(p, listen, &event);
		cm_release_work(p);
	}
	cm_free_work(&rw->work);
	cm_put_id(listen);	/* rw's */
}

/* ---------------------------------------------------------------------
 * Receiving: REP, RTU, MRA, REJ
 */

static __be32 cm_rep_qpn(struct cm_rep_msg *rep, enum ib_qp_type qp_type)
{
	/* An XRC target answers with its QPN in the EECN field. */
	if (qp_type == IB_QPT_XRC_INI)
		return cpu_to_be32(IBA_GET(CM_REP_LOCAL_EE_CONTEXT_NUMBER, rep));
	return cpu_to_be32(IBA_GET(CM_REP_LOCAL_QPN, rep));
}

/*
 * A REP for a connection that is past it (REP_RCVD, MRA_REP_SENT or
 * ESTABLISHED): resend what answered it, if we answered it yet.
 */
static void cm_dup_rep(struct cm_work *work, struct cm_id_priv *p)
{
	struct ib_mad_send_buf *msg;

	cm_count(work->port, CM_RECV_DUPLICATES, CM_REP_ATTR_ID, 1);
	if (READ_ONCE(p->id.state) == IB_CM_REP_RCVD)
		return;
	msg = cm_alloc_response(work->port, work->recv_wc);
	if (IS_ERR(msg))
		return;

	spin_lock_irq(&p->lock);
	if (p->id.state == IB_CM_ESTABLISHED) {
		cm_format_rtu(msg->mad, p, p->sent_data, p->sent_data_len);
	} else if (p->id.state == IB_CM_MRA_REP_SENT) {
		cm_format_mra(msg->mad, p, CM_MSG_RESPONSE_REP);
		trace_icm_send_mra(&p->id);
	} else {
		spin_unlock_irq(&p->lock);
		cm_free_msg(msg);
		return;
	}
	trace_icm_send_dup_rep(&p->id);
	spin_unlock_irq(&p->lock);
	cm_post_resent(msg);
}

/* A REP we refused leaves no trace of its sender in the id. */
static void cm_forget_peer(struct cm_id_priv *p)
{
	p->id.remote_id = 0;
	p->remote_ca_guid = 0;
	p->remote_qpn = 0;
}

static void cm_format_rep_event(struct cm_rep_msg *rep, struct cm_id_priv *p,
				struct ib_cm_event *event)
{
	struct ib_cm_rep_event_param *param = &event->param.rep_rcvd;

	event->event = IB_CM_REP_RECEIVED;
	param->remote_ca_guid = p->remote_ca_guid;
	param->remote_qkey = IBA_GET(CM_REP_LOCAL_Q_KEY, rep);
	param->remote_qpn = be32_to_cpu(p->remote_qpn);
	param->starting_psn = IBA_GET(CM_REP_STARTING_PSN, rep);
	param->responder_resources = IBA_GET(CM_REP_INITIATOR_DEPTH, rep);
	param->initiator_depth = IBA_GET(CM_REP_RESPONDER_RESOURCES, rep);
	param->target_ack_delay = IBA_GET(CM_REP_TARGET_ACK_DELAY, rep);
	param->failover_accepted = IBA_GET(CM_REP_FAILOVER_ACCEPTED, rep);
	param->flow_control = IBA_GET(CM_REP_END_TO_END_FLOW_CONTROL, rep);
	param->rnr_retry_count = IBA_GET(CM_REP_RNR_RETRY_COUNT, rep);
	param->srq = IBA_GET(CM_REP_SRQ, rep);
	param->ece.vendor_id = IBA_GET(CM_REP_VENDOR_ID_H, rep) << 16 |
			       IBA_GET(CM_REP_VENDOR_ID_M, rep) << 8 |
			       IBA_GET(CM_REP_VENDOR_ID_L, rep);
	param->ece.attr_mod = be32_to_cpu(rep->hdr.attr_mod);
	event->private_data = IBA_GET_MEM_PTR(CM_REP_PRIVATE_DATA, rep);
}

static struct cm_id_priv *cm_get_rep(struct cm_port *port,
				     struct ib_mad_recv_wc *recv_wc,
				     bool answer)
{
	struct cm_rep_msg *rep = (struct cm_rep_msg *)recv_wc->recv_buf.mad;
	struct cm_id_priv *p;

	p = cm_get_local(cpu_to_be32(IBA_GET(CM_REP_REMOTE_COMM_ID, rep)), 0);
	if (!p)
		trace_icm_remote_no_priv_err(IBA_GET(CM_REP_LOCAL_COMM_ID, rep));
	return p;
}

static void cm_recv_rep(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_rep_msg *rep = cm_recv_msg(work);
	__be32 remote_id = cpu_to_be32(IBA_GET(CM_REP_LOCAL_COMM_ID, rep));
	struct ib_cm_event event = {};
	struct cm_id_priv *old;
	struct cm_peer *peer;

	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_REQ_SENT && p->id.state != IB_CM_MRA_REQ_RCVD) {
		/* Past the REP, from the same peer: a repeat. */
		bool dup = p->id.remote_id == remote_id &&
			   (p->id.state == IB_CM_REP_RCVD ||
			    p->id.state == IB_CM_MRA_REP_SENT ||
			    p->id.state == IB_CM_ESTABLISHED);

		if (!dup)
			trace_icm_rep_unknown_err(be32_to_cpu(p->id.local_id),
						  be32_to_cpu(remote_id),
						  p->id.state);
		spin_unlock_irq(&p->lock);
		if (dup)
			cm_dup_rep(work, p);
		return;
	}

	p->id.remote_id = remote_id;
	p->remote_ca_guid = cpu_to_be64(IBA_GET(CM_REP_LOCAL_CA_GUID, rep));
	p->remote_qpn = cm_rep_qpn(rep, p->qp_type);

	spin_lock(&cm.lock);
	peer = cm_insert_remote_id(p);
	if (peer) {
		/*
		 * Another connection from the same remote ID: not ours.  Or
		 * no memory to record it: the peer resends the REP.
		 */
		spin_unlock(&cm.lock);
		cm_forget_peer(p);
		spin_unlock_irq(&p->lock);
		if (IS_ERR(peer))
			cm_count_drop(work->port, CM_DROP_NOMEM);
		else
			trace_icm_insert_failed_err(be32_to_cpu(remote_id));
		return;
	}
	old = cm_insert_remote_qp(p);
	if (IS_ERR(old)) {
		cm_unlink_peer_tables(p);
		spin_unlock(&cm.lock);
		cm_forget_peer(p);
		spin_unlock_irq(&p->lock);
		cm_count_drop(work->port, CM_DROP_NOMEM);
		return;
	}
	if (old) {
		cm_unlink_peer_tables(p);
		if (!refcount_inc_not_zero(&old->refcount))
			old = NULL;
		spin_unlock(&cm.lock);
		cm_forget_peer(p);
		spin_unlock_irq(&p->lock);
		trace_icm_staleconn_err(be32_to_cpu(p->id.local_id),
					be32_to_cpu(remote_id));
		cm_issue_rej(work->port, work->recv_wc, IB_CM_REJ_STALE_CONN,
			     CM_MSG_RESPONSE_REP,
			     IBA_GET(CM_REP_REMOTE_COMM_ID, rep),
			     be32_to_cpu(remote_id));
		if (old) {
			cm_disconnect_stale(old);
			cm_put_id(old);
		}
		return;
	}
	spin_unlock(&cm.lock);

	cm_cancel_msg(p);
	cm_set_state(p, IB_CM_REP_RCVD, CM_RECV_REP);
	p->sq_psn = cpu_to_be32(IBA_GET(CM_REP_STARTING_PSN, rep));
	p->initiator_depth = IBA_GET(CM_REP_RESPONDER_RESOURCES, rep);
	p->responder_resources = IBA_GET(CM_REP_INITIATOR_DEPTH, rep);
	p->target_ack_delay = IBA_GET(CM_REP_TARGET_ACK_DELAY, rep);
	p->rnr_retry_count = IBA_GET(CM_REP_RNR_RETRY_COUNT, rep);
	/* Our QP's ACK timeout now includes the peer's ACK delay. */
	p->av.timeout = cm_ack_timeout(p->target_ack_delay, p->av.timeout - 1);
	if (p->alt_av.port)
		p->alt_av.timeout = cm_ack_timeout(p->target_ack_delay,
						   p->alt_av.timeout - 1);
	cm_format_rep_event(rep, p, &event);
	spin_unlock_irq(&p->lock);
	cm_deliver(p, &event);
}

/*
 * The id a message of an established exchange is for: @ours is our comm
 * ID as the message names it, @theirs the sender's (host order).
 */
static struct cm_id_priv *cm_get_conn(u32 ours, u32 theirs)
{
	return cm_get_local(cpu_to_be32(ours), cpu_to_be32(theirs));
}

static struct cm_id_priv *cm_get_rtu(struct cm_port *port,
				     struct ib_mad_recv_wc *recv_wc,
				     bool answer)
{
	struct cm_rtu_msg *rtu = (struct cm_rtu_msg *)recv_wc->recv_buf.mad;

	return cm_get_conn(IBA_GET(CM_RTU_REMOTE_COMM_ID, rtu),
			   IBA_GET(CM_RTU_LOCAL_COMM_ID, rtu));
}

static void cm_recv_rtu(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_rtu_msg *rtu = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_RTU_RECEIVED };

	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_REP_SENT && p->id.state != IB_CM_MRA_REP_RCVD) {
		spin_unlock_irq(&p->lock);
		cm_count(work->port, CM_RECV_DUPLICATES, CM_RTU_ATTR_ID, 1);
		return;
	}
	cm_cancel_msg(p);
	cm_set_state(p, IB_CM_ESTABLISHED, CM_RECV_RTU);
	spin_unlock_irq(&p->lock);
	event.private_data = IBA_GET_MEM_PTR(CM_RTU_PRIVATE_DATA, rtu);
	cm_deliver(p, &event);
}

/*
 * The id's outstanding message waits @timeout_ms from now (as far as the
 * policy allows), and so does each resend of it: an MRA gives the peer
 * that much more, destroy cuts a DREQ's wait to it.  False when there is
 * no such message or its send was already done.
 */
static bool cm_extend_msg(struct cm_id_priv *p, int timeout_ms)
{
	lockdep_assert_held(&p->lock);
	timeout_ms = cm_policy_wait_cap(&p->policy, timeout_ms);
	if (!p->msg || cm_msg_dev(p->msg)->tp->modify(p->msg, timeout_ms))
		return false;
	/* The waits after this one are as long (backoff: at least). */
	p->msg_timeout_ms = timeout_ms;
	p->msg_since = jiffies;
	p->msg_wait_ms = timeout_ms;
	p->msg_resends_since = cm_msg_resends(p);
	return true;
}

static struct cm_id_priv *cm_get_mra(struct cm_port *port,
				     struct ib_mad_recv_wc *recv_wc,
				     bool answer)
{
	struct cm_mra_msg *mra = (struct cm_mra_msg *)recv_wc->recv_buf.mad;
	struct cm_id_priv *p;

	p = cm_get_local(cpu_to_be32(IBA_GET(CM_MRA_REMOTE_COMM_ID, mra)), 0);
	if (!p)
		trace_icm_mra_unknown_err(NULL);
	return p;
}

static void cm_recv_mra(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_mra_msg *mra = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_MRA_RECEIVED };
	unsigned int mraed = IBA_GET(CM_MRA_MESSAGE_MRAED, mra);
	u8 service_timeout = IBA_GET(CM_MRA_SERVICE_TIMEOUT, mra);
	int timeout;

	spin_lock_irq(&p->lock);
	/* Once the peer is known, the MRA must come from it. */
	if (p->id.state != IB_CM_REQ_SENT && p->id.state != IB_CM_MRA_REQ_RCVD &&
	    p->id.remote_id != cpu_to_be32(IBA_GET(CM_MRA_LOCAL_COMM_ID, mra)))
		goto drop;

	timeout = cm_iba_to_ms(service_timeout) + cm_iba_to_ms(p->av.timeout);
	switch (p->id.state) {
	case IB_CM_REQ_SENT:
		if (mraed != CM_MSG_RESPONSE_REQ || !cm_extend_msg(p, timeout))
			goto drop;
		cm_set_state(p, IB_CM_MRA_REQ_RCVD, CM_RECV_MRA);
		break;
	case IB_CM_REP_SENT:
		if (mraed != CM_MSG_RESPONSE_REP || !cm_extend_msg(p, timeout))
			goto drop;
		cm_set_state(p, IB_CM_MRA_REP_RCVD, CM_RECV_MRA);
		break;
	case IB_CM_ESTABLISHED:
		if (mraed != CM_MSG_RESPONSE_OTHER ||
		    p->id.lap_state != IB_CM_LAP_SENT ||
		    !cm_extend_msg(p, timeout)) {
			if (p->id.lap_state == IB_CM_MRA_LAP_RCVD)
				goto dup;
			goto drop;
		}
		cm_set_lap_state(p, IB_CM_MRA_LAP_RCVD, CM_RECV_MRA);
		break;
	case IB_CM_MRA_REQ_RCVD:
	case IB_CM_MRA_REP_RCVD:
		goto dup;
	default:
		goto drop;
	}
	spin_unlock_irq(&p->lock);
	event.param.mra_rcvd.service_timeout = service_timeout;
	event.private_data = IBA_GET_MEM_PTR(CM_MRA_PRIVATE_DATA, mra);
	cm_deliver(p, &event);
	return;

dup:
	cm_count(work->port, CM_RECV_DUPLICATES, CM_MRA_ATTR_ID, 1);
drop:
	spin_unlock_irq(&p->lock);
}

/* Find the id a REJ is for. */
static struct cm_id_priv *cm_get_rejected(struct cm_rej_msg *rej)
{
	__be32 local_id = cpu_to_be32(IBA_GET(CM_REJ_REMOTE_COMM_ID, rej));
	__be32 remote_id = cpu_to_be32(IBA_GET(CM_REJ_LOCAL_COMM_ID, rej));
	struct cm_id_priv *p = NULL;

	if (IBA_GET(CM_REJ_REASON, rej) == IB_CM_REJ_TIMEOUT &&
	    IBA_GET(CM_REJ_REJECTED_INFO_LENGTH, rej) >= sizeof(__be64)) {
		/* A timed out peer names itself by its CA GUID in the ARI. */
		__be64 guid;

		memcpy(&guid, IBA_GET_MEM_PTR(CM_REJ_ARI, rej), sizeof(guid));
		p = cm_get_remote_id(remote_id, guid, NULL);
		if (p)
			return p;
		/* Its REQ may wait on a listener's queue: cm_rej_with_req(). */
		if (!local_id)
			return ERR_PTR(-EINPROGRESS);
	}

	/*
	 * By our comm ID alone: the peer's may not be known yet when this
	 * comes in (a REJ right behind the REP that tells it), so
	 * cm_recv_rej() checks it once the inputs before it have run.
	 */
	return local_id ? cm_get_local(local_id, 0) : NULL;
}

/*
 * Whether @rej, found by our comm ID, is from @p's peer: it names the
 * peer's comm ID we know, or it rejects our REQ before we knew one.
 * p->lock held.
 */
static bool cm_rej_from_peer(struct cm_id_priv *p, struct cm_rej_msg *rej)
{
	lockdep_assert_held(&p->lock);
	if (p->id.remote_id == cpu_to_be32(IBA_GET(CM_REJ_LOCAL_COMM_ID, rej)))
		return true;
	return !p->id.remote_id &&
	       IBA_GET(CM_REJ_MESSAGE_REJECTED, rej) == CM_MSG_RESPONSE_REQ;
}

static struct cm_id_priv *cm_get_rej(struct cm_port *port,
				     struct ib_mad_recv_wc *recv_wc,
				     bool answer)
{
	struct cm_rej_msg *rej = (struct cm_rej_msg *)recv_wc->recv_buf.mad;
	struct cm_id_priv *p;

	p = cm_get_rejected(rej);
	if (!p)
		trace_icm_rej_unknown_err(NULL);
	return p;
}

static void cm_recv_rej(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_rej_msg *rej = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_REJ_RECEIVED };
	enum ib_cm_rej_reason reason = IBA_GET(CM_REJ_REASON, rej);
	/* Delivered however long it claims to be, but only what is there. */
	unsigned int ari_len = min_t(unsigned int,
				     IBA_GET(CM_REJ_REJECTED_INFO_LENGTH, rej),
				     IB_CM_REJ_ARI_LENGTH);

	spin_lock_irq(&p->lock);
	if (!cm_rej_from_peer(p, rej)) {
		spin_unlock_irq(&p->lock);
		cm_count_drop(work->port, CM_DROP_UNMATCHED);
		trace_icm_rej_unknown_err(&p->id);
		return;
	}
	switch (p->id.state) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
	case IB_CM_REP_SENT:
	case IB_CM_MRA_REP_RCVD:
	case IB_CM_REQ_RCVD:
	case IB_CM_MRA_REQ_SENT:
		cm_cancel_msg(p);
		if (reason == IB_CM_REJ_STALE_CONN)
			cm_enter_timewait(p, CM_RECV_REJ);
		else
			cm_reset_to_idle(p, CM_RECV_REJ);
		break;
	case IB_CM_REP_RCVD:
	case IB_CM_MRA_REP_SENT:
	case IB_CM_DREQ_SENT:
		cm_enter_timewait(p, CM_RECV_REJ);
		break;
	case IB_CM_ESTABLISHED:
		/*
		 * Only before any path migration, or against our LAP: after a
		 * migration (LAP idle) a stray REJ would end a connection that
		 * works, as the stock CM also decides.
		 */
		if (p->id.lap_state == IB_CM_LAP_UNINIT ||
		    p->id.lap_state == IB_CM_LAP_SENT) {
			cm_enter_timewait(p, CM_RECV_REJ);
			break;
		}
		fallthrough;
	default:
		spin_unlock_irq(&p->lock);
		trace_icm_rej_unknown_err(&p->id);
		return;
	}
	spin_unlock_irq(&p->lock);

	event.param.rej_rcvd.reason = reason;
	event.param.rej_rcvd.ari = IBA_GET_MEM_PTR(CM_REJ_ARI, rej);
	event.param.rej_rcvd.ari_length = ari_len;
	event.private_data = IBA_GET_MEM_PTR(CM_REJ_PRIVATE_DATA, rej);
	cm_deliver(p, &event);
}

/* ---------------------------------------------------------------------
 * Receiving: DREQ, DREP
 */

/*
 * Answer a DREQ with a DREP built from the DREQ itself, and from @p (if
 * not NULL) the private data of the DREP it sent.
 */
static void cm_issue_drep(struct cm_port *port, struct ib_mad_recv_wc *recv_wc,
			  struct cm_id_priv *p, bool resent)
{
	struct cm_dreq_msg *dreq = (struct cm_dreq_msg *)recv_wc->recv_buf.mad;
	struct ib_mad_send_buf *msg;
	u32 local = IBA_GET(CM_DREQ_REMOTE_COMM_ID, dreq);
	u32 remote = IBA_GET(CM_DREQ_LOCAL_COMM_ID, dreq);

	msg = cm_alloc_response(port, recv_wc);
	if (IS_ERR(msg))
		return;
	if (p)
		spin_lock_irq(&p->lock);
	cm_format_drep(msg->mad, cpu_to_be32(local), cpu_to_be32(remote),
		       dreq->hdr.tid, p ? p->sent_data : NULL,
		       p ? p->sent_data_len : 0);
	if (p)
		spin_unlock_irq(&p->lock);
	trace_icm_issue_drep(local, remote);
	if (resent)
		cm_post_resent(msg);
	else
		cm_post_oneshot(msg);
}

/* A DREQ for no connection needs an answer, as for a REQ. */
static struct cm_id_priv *cm_get_dreq(struct cm_port *port,
				      struct ib_mad_recv_wc *recv_wc,
				      bool answer)
{
	struct cm_dreq_msg *dreq = (struct cm_dreq_msg *)recv_wc->recv_buf.mad;
	struct cm_id_priv *p;

	p = cm_get_conn(IBA_GET(CM_DREQ_REMOTE_COMM_ID, dreq),
			IBA_GET(CM_DREQ_LOCAL_COMM_ID, dreq));
	if (p)
		return p;
	if (!answer)
		return ERR_PTR(-EAGAIN);
	/*
	 * The connection is gone; the peer still needs its DREP.  If it is
	 * in timewait still, the DREP is a repeat, as cm_recv_dreq() sends.
	 */
	cm_count(port, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID, 1);
	if (cm_is_timewait_record(cpu_to_be32(IBA_GET(CM_DREQ_REMOTE_COMM_ID,
						      dreq)),
				  cpu_to_be32(IBA_GET(CM_DREQ_LOCAL_COMM_ID,
						      dreq)))) {
		cm_issue_drep(port, recv_wc, NULL, true);
	} else {
		trace_icm_dreq_unknown_err(NULL);
		cm_issue_drep(port, recv_wc, NULL, false);
	}
	return ERR_PTR(-ENOENT);
}

static void cm_recv_dreq(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_dreq_msg *dreq = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_DREQ_RECEIVED };

	spin_lock_irq(&p->lock);
	if (p->local_qpn != cpu_to_be32(IBA_GET(CM_DREQ_REMOTE_QPN_EECN, dreq))) {
		spin_unlock_irq(&p->lock);
		cm_count_drop(work->port, CM_DROP_FIELD);
		return;
	}
	switch (p->id.state) {
	case IB_CM_DREQ_SENT:
		if (p->destroyed) {
			/* Nobody to ask for the DREP: the CM answers. */
			cm_enter_timewait(p, CM_RECV_DREQ);
			spin_unlock_irq(&p->lock);
			cm_issue_drep(work->port, work->recv_wc, NULL, false);
			return;
		}
		fallthrough;
	case IB_CM_REP_SENT:
	case IB_CM_MRA_REP_RCVD:
	case IB_CM_ESTABLISHED:
		/* Also stops a LAP in flight. */
		cm_cancel_msg(p);
		break;
	case IB_CM_TIMEWAIT:
		spin_unlock_irq(&p->lock);
		cm_count(work->port, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID, 1);
		cm_issue_drep(work->port, work->recv_wc, p, true);
		return;
	case IB_CM_DREQ_RCVD:
		spin_unlock_irq(&p->lock);
		cm_count(work->port, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID, 1);
		return;
	default:
		spin_unlock_irq(&p->lock);
		trace_icm_dreq_unknown_err(&p->id);
		return;
	}
	cm_set_state(p, IB_CM_DREQ_RCVD, CM_RECV_DREQ);
	p->tid = dreq->hdr.tid;
	spin_unlock_irq(&p->lock);
	event.private_data = IBA_GET_MEM_PTR(CM_DREQ_PRIVATE_DATA, dreq);
	cm_deliver(p, &event);
}

static struct cm_id_priv *cm_get_drep(struct cm_port *port,
				      struct ib_mad_recv_wc *recv_wc,
				      bool answer)
{
	struct cm_drep_msg *drep = (struct cm_drep_msg *)recv_wc->recv_buf.mad;

	return cm_get_conn(IBA_GET(CM_DREP_REMOTE_COMM_ID, drep),
			   IBA_GET(CM_DREP_LOCAL_COMM_ID, drep));
}

static void cm_recv_drep(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_drep_msg *drep = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_DREP_RECEIVED };

	spin_lock_irq(&p->lock);
	/*
	 * In TIMEWAIT the DREP is usually no repeat: it comes after the
	 * DREQ's last retry.  Nothing more to do either way.
	 */
	if (p->id.state != IB_CM_DREQ_SENT && p->id.state != IB_CM_DREQ_RCVD) {
		spin_unlock_irq(&p->lock);
		return;
	}
	cm_enter_timewait(p, CM_RECV_DREP);
	spin_unlock_irq(&p->lock);
	event.private_data = IBA_GET_MEM_PTR(CM_DREP_PRIVATE_DATA, drep);
	cm_deliver(p, &event);
}

/* ---------------------------------------------------------------------
 * Receiving: SIDR_REQ, SIDR_REP
 */

/* Answer a SIDR_REQ that no listener will see, built from the request. */
static void cm_issue_sidr_rep(struct cm_port *port,
			      struct ib_mad_recv_wc *recv_wc,
			      enum ib_cm_sidr_status status)
{
	struct cm_sidr_req_msg *req =
		(struct cm_sidr_req_msg *)recv_wc->recv_buf.mad;
	struct ib_mad_send_buf *msg;
	struct cm_sidr_rep_msg *rep;

	msg = cm_alloc_response(port, recv_wc);
	if (IS_ERR(msg))
		return;
	rep = msg->mad;
	cm_init_mad(&rep->hdr, CM_SIDR_REP_ATTR_ID, req->hdr.tid);
	IBA_SET(CM_SIDR_REP_REQUESTID, rep,
		IBA_GET(CM_SIDR_REQ_REQUESTID, req));
	IBA_SET(CM_SIDR_REP_STATUS, rep, status);
	IBA_SET(CM_SIDR_REP_SERVICEID, rep,
		IBA_GET(CM_SIDR_REQ_SERVICEID, req));
	cm_post_oneshot(msg);
}

/* A SIDR_REQ is queued on its listener; without one it needs an answer. */
static struct cm_id_priv *cm_get_sidr_req(struct cm_port *port,
					  struct ib_mad_recv_wc *recv_wc,
					  bool answer)
{
	struct cm_sidr_req_msg *req =
		(struct cm_sidr_req_msg *)recv_wc->recv_buf.mad;
	struct cm_id_priv *listen;

	listen = cm_get_listen(port->cm_dev->ib_device,
			       cpu_to_be64(IBA_GET(CM_SIDR_REQ_SERVICEID, req)));
	if (listen)
		return listen;
	if (!answer)
		return ERR_PTR(-EAGAIN);
	cm_issue_sidr_rep(port, recv_wc, IB_SIDR_UNSUPPORTED);
	return ERR_PTR(-ENOENT);
}

/*
 * A SIDR_REQ on its listener's queue: make its id, whose address handle
 * cm_req_setup() makes off this queue, as for a REQ.  Takes @work over.
 */
static void cm_take_sidr_req(struct cm_id_priv *listen, struct cm_work *work)
{
	struct cm_sidr_req_msg *req = cm_recv_msg(work);
	struct cm_req_work *rw = cm_req_work(work);
	__be64 sid = cpu_to_be64(IBA_GET(CM_SIDR_REQ_SERVICEID, req));
	struct ib_wc *wc = work->recv_wc->wc;
	struct cm_id_priv *p;

	if (cm_pass_to_new_listener(listen, work, sid))
		return;
	p = cm_alloc_id(work->port->cm_dev->ib_device, NULL, NULL, false,
			GFP_KERNEL);
	if (IS_ERR(p)) {
		cm_count_drop(work->port, CM_DROP_NOMEM);
		cm_free_work(work);
		return;
	}
	p->id.remote_id = cpu_to_be32(IBA_GET(CM_SIDR_REQ_REQUESTID, req));
	p->id.service_id = sid;
	p->tid = req->hdr.tid;
	spin_lock_irq(&p->lock);
	cm_set_state(p, IB_CM_SIDR_REQ_RCVD, CM_RECV_SIDR_REQ);
	spin_unlock_irq(&p->lock);
	cm_hold_work(p);
	if (wc->wc_flags & IB_WC_GRH)
		p->sidr_gid = work->recv_wc->recv_buf.grh->sgid;
	else
		p->sidr_lid = wc->slid;
	rw->match = CM_REQ_NEW;
	cm_queue_setup(rw, listen, p);
}

/*
 * On @listen's queue, once the SIDR_REQ's id has its address handle: a
 * repeat of a request that is pending is counted only; a new one is
 * handed to the consumer, or refused if the listener went meanwhile.
 */
static void cm_hand_over_sidr(struct cm_id_priv *listen, struct cm_work *work,
			      struct cm_id_priv *p)
{
	struct cm_sidr_req_msg *req = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_SIDR_REQ_RECEIVED };
	struct ib_cm_sidr_req_event_param *param = &event.param.sidr_req_rcvd;
	bool listening;

	spin_lock_irq(&cm.lock);
	if (cm_insert_sidr(p)) {
		spin_unlock_irq(&cm.lock);
		cm_count(work->port, CM_RECV_DUPLICATES, CM_SIDR_REQ_ATTR_ID, 1);
		cm_drop_new(p);
		return;
	}
	/* The listener may have gone while the SIDR_REQ waited for it. */
	listening = listen->listening;
	spin_unlock_irq(&cm.lock);
	if (!listening) {
		struct ib_cm_sidr_rep_param rep = { .status = IB_SIDR_UNSUPPORTED };

		spin_lock_irq(&p->lock);
		cm_send_sidr_rep_locked(p, &rep, CM_DROP);
		spin_unlock_irq(&p->lock);
		cm_drop_new(p);
		return;
	}

	param->listen_id = &listen->id;
	param->service_id = p->id.service_id;
	param->sgid_attr = p->av.ah_attr.grh.sgid_attr;
	param->bth_pkey = cm_bth_pkey(work);
	param->port = work->port->port_num;
	param->pkey = IBA_GET(CM_SIDR_REQ_PARTITION_KEY, req);
	event.private_data = IBA_GET_MEM_PTR(CM_SIDR_REQ_PRIVATE_DATA, req);
	cm_publish_id(p);
	cm_deliver_new(p, listen, &event);
	cm_release_work(p);
}

static struct cm_id_priv *cm_get_sidr_rep(struct cm_port *port,
					  struct ib_mad_recv_wc *recv_wc,
					  bool answer)
{
	struct cm_sidr_rep_msg *rep =
		(struct cm_sidr_rep_msg *)recv_wc->recv_buf.mad;

	return cm_get_local(cpu_to_be32(IBA_GET(CM_SIDR_REP_REQUESTID, rep)),
			    0);
}

static void cm_recv_sidr_rep(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_sidr_rep_msg *rep = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_SIDR_REP_RECEIVED };
	struct ib_cm_sidr_rep_event_param *param = &event.param.sidr_rep_rcvd;
	unsigned int status = IBA_GET(CM_SIDR_REP_STATUS, rep);
	/* Any status is delivered; the information only as far as it goes. */
	unsigned int info_len =
		min_t(unsigned int,
		      IBA_GET(CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH, rep),
		      IB_CM_SIDR_REP_INFO_LENGTH);

	spin_lock_irq(&p->lock);
	/* Late (after a timeout or destroy): not a repeat, just too late. */
	if (p->id.state != IB_CM_SIDR_REQ_SENT) {
		spin_unlock_irq(&p->lock);
		return;
	}
	cm_cancel_msg(p);
	cm_set_state(p, IB_CM_IDLE, CM_RECV_SIDR_REP);
	spin_unlock_irq(&p->lock);

	param->status = status;
	param->qkey = IBA_GET(CM_SIDR_REP_Q_KEY, rep);
	param->qpn = IBA_GET(CM_SIDR_REP_QPN, rep);
	param->info = IBA_GET_MEM_PTR(CM_SIDR_REP_ADDITIONAL_INFORMATION, rep);
	param->info_len = info_len;
	param->sgid_attr = p->av.ah_attr.grh.sgid_attr;
	event.private_data = IBA_GET_MEM_PTR(CM_SIDR_REP_PRIVATE_DATA, rep);
	cm_deliver(p, &event);
}

/* ---------------------------------------------------------------------
 * Receiving: LAP, APR (no API sends a LAP; both are accepted)
 */

static void cm_path_from_lap(struct cm_lap_msg *lap, struct cm_id_priv *p,
			     struct sa_path_rec *path)
{
	u8 plt = IBA_GET(CM_LAP_ALTERNATE_LOCAL_ACK_TIMEOUT, lap);

	memset(path, 0, sizeof(*path));
	path->rec_type = SA_PATH_REC_TYPE_IB;
	path->dgid = *IBA_GET_MEM_PTR(CM_LAP_ALTERNATE_LOCAL_PORT_GID, lap);
	path->sgid = *IBA_GET_MEM_PTR(CM_LAP_ALTERNATE_REMOTE_PORT_GID, lap);
	path->flow_label =
		cpu_to_be32(IBA_GET(CM_LAP_ALTERNATE_FLOW_LABEL, lap));
	path->hop_limit = IBA_GET(CM_LAP_ALTERNATE_HOP_LIMIT, lap);
	path->traffic_class = IBA_GET(CM_LAP_ALTERNATE_TRAFFIC_CLASS, lap);
	path->reversible = 1;
	path->pkey = p->pkey;
	path->sl = IBA_GET(CM_LAP_ALTERNATE_SL, lap);
	path->mtu_selector = IB_SA_EQ;
	path->mtu = p->path_mtu;
	path->rate_selector = IB_SA_EQ;
	path->rate = IBA_GET(CM_LAP_ALTERNATE_PACKET_RATE, lap);
	path->packet_life_time_selector = IB_SA_EQ;
	path->packet_life_time = plt ? plt - 1 : 0;
	path->service_id = p->id.service_id;
	sa_path_set_dlid(path, IBA_GET(CM_LAP_ALTERNATE_LOCAL_PORT_LID, lap));
	sa_path_set_slid(path, IBA_GET(CM_LAP_ALTERNATE_REMOTE_PORT_LID, lap));
}

static struct cm_id_priv *cm_get_lap(struct cm_port *port,
				     struct ib_mad_recv_wc *recv_wc,
				     bool answer)
{
	struct cm_lap_msg *lap = (struct cm_lap_msg *)recv_wc->recv_buf.mad;

	/* Alternate paths exist only on InfiniBand links. */
	if (!rdma_protocol_ib(port->cm_dev->ib_device, port->port_num)) {
		cm_count_drop(port, CM_DROP_ATTR);
		return ERR_PTR(-EOPNOTSUPP);
	}
	return cm_get_conn(IBA_GET(CM_LAP_REMOTE_COMM_ID, lap),
			   IBA_GET(CM_LAP_LOCAL_COMM_ID, lap));
}

static void cm_recv_lap(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_lap_msg *lap = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_LAP_RECEIVED };
	struct ib_mad_send_buf *msg = NULL;
	struct sa_path_rec path;
	struct cm_av alt_av = {};

	/* A repeated LAP is answered with the MRA we promised. */
	if (READ_ONCE(p->id.lap_state) == IB_CM_MRA_LAP_SENT)
		msg = cm_alloc_response(work->port, work->recv_wc);

	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_ESTABLISHED)
		goto unlock;
	switch (p->id.lap_state) {
	case IB_CM_LAP_UNINIT:
	case IB_CM_LAP_IDLE:
		break;
	case IB_CM_MRA_LAP_SENT:
		cm_count(work->port, CM_RECV_DUPLICATES, CM_LAP_ATTR_ID, 1);
		if (IS_ERR_OR_NULL(msg))
			goto unlock;
		cm_format_mra(msg->mad, p, CM_MSG_RESPONSE_OTHER);
		trace_icm_send_mra(&p->id);
		spin_unlock_irq(&p->lock);
		cm_post_resent(msg);
		return;
	case IB_CM_LAP_RCVD:
		cm_count(work->port, CM_RECV_DUPLICATES, CM_LAP_ATTR_ID, 1);
		fallthrough;
	default:
		goto unlock;
	}
	cm_path_from_lap(lap, p, &path);
	spin_unlock_irq(&p->lock);

	/* May sleep: set the new alternate path up outside the lock. */
	if (cm_av_from_path(&alt_av, &path, NULL)) {
		cm_av_release(&alt_av);
		goto out;
	}

	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_ESTABLISHED ||
	    (p->id.lap_state != IB_CM_LAP_UNINIT &&
	     p->id.lap_state != IB_CM_LAP_IDLE)) {
		spin_unlock_irq(&p->lock);
		cm_av_release(&alt_av);
		goto out;
	}
	cm_av_move(&p->alt_av, &alt_av);
	cm_set_lap_state(p, IB_CM_LAP_RCVD, CM_RECV_LAP);
	p->tid = lap->hdr.tid;
	spin_unlock_irq(&p->lock);
	cm_av_release(&alt_av);

	event.param.lap_rcvd.alternate_path = &path;
	event.private_data = IBA_GET_MEM_PTR(CM_LAP_PRIVATE_DATA, lap);
	cm_deliver(p, &event);
	goto out;

unlock:
	spin_unlock_irq(&p->lock);
out:
	if (!IS_ERR_OR_NULL(msg))
		cm_free_msg(msg);
}

static struct cm_id_priv *cm_get_apr(struct cm_port *port,
				     struct ib_mad_recv_wc *recv_wc,
				     bool answer)
{
	struct cm_apr_msg *apr = (struct cm_apr_msg *)recv_wc->recv_buf.mad;

	if (IBA_GET(CM_APR_AR_STATUS, apr) > IB_CM_APR_INVALID_SL ||
	    IBA_GET(CM_APR_ADDITIONAL_INFORMATION_LENGTH, apr) >
	    IB_CM_APR_INFO_LENGTH)
		return ERR_PTR(-EINVAL);
	return cm_get_conn(IBA_GET(CM_APR_REMOTE_COMM_ID, apr),
			   IBA_GET(CM_APR_LOCAL_COMM_ID, apr));
}

static void cm_recv_apr(struct cm_id_priv *p, struct cm_work *work)
{
	struct cm_apr_msg *apr = cm_recv_msg(work);
	struct ib_cm_event event = { .event = IB_CM_APR_RECEIVED };
	unsigned int status = IBA_GET(CM_APR_AR_STATUS, apr);
	unsigned int info_len =
		IBA_GET(CM_APR_ADDITIONAL_INFORMATION_LENGTH, apr);

	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_ESTABLISHED ||
	    (p->id.lap_state != IB_CM_LAP_SENT &&
	     p->id.lap_state != IB_CM_MRA_LAP_RCVD)) {
		spin_unlock_irq(&p->lock);
		return;
	}
	cm_set_lap_state(p, IB_CM_LAP_IDLE, CM_RECV_APR);
	cm_cancel_msg(p);
	spin_unlock_irq(&p->lock);

	event.param.apr_rcvd.ap_status = status;
	event.param.apr_rcvd.apr_info =
		IBA_GET_MEM_PTR(CM_APR_ADDITIONAL_INFORMATION, apr);
	event.param.apr_rcvd.info_len = info_len;
	event.private_data = IBA_GET_MEM_PTR(CM_APR_PRIVATE_DATA, apr);
	cm_deliver(p, &event);
}

/* ---------------------------------------------------------------------
 * Send completions, timeouts, establishment
 */

/* A retried message timed out or failed: tell the id, if still current. */
/* Whether @p is still where a send it made in @sent left it. */
static bool cm_still_waiting(struct cm_id_priv *p, enum ib_cm_state sent)
{
	enum ib_cm_state now = p->id.state;

	/* A newer exchange has a send of its own outstanding. */
	if (p->msg)
		return false;
	switch (sent) {
	case IB_CM_REQ_SENT:
		return now == IB_CM_REQ_SENT || now == IB_CM_MRA_REQ_RCVD;
	case IB_CM_REP_SENT:
		return now == IB_CM_REP_SENT || now == IB_CM_MRA_REP_RCVD;
	default:
		return now == sent;
	}
}

/* A retried message timed out or failed: tell the id, if still current. */
static void cm_process_send_error(struct cm_id_priv *p)
{
	struct ib_cm_event event = {};
	enum ib_cm_state sent;
	bool notify = false;

	spin_lock_irq(&p->lock);
	sent = p->err_state;
	event.param.send_status = p->err_status;
	if (cm_still_waiting(p, sent)) {
		notify = true;
		switch (sent) {
		case IB_CM_REQ_SENT:
			cm_reset_to_idle(p, CM_TIMEOUT);
			event.event = IB_CM_REQ_ERROR;
			break;
		case IB_CM_REP_SENT:
			cm_reset_to_idle(p, CM_TIMEOUT);
			event.event = IB_CM_REP_ERROR;
			break;
		case IB_CM_DREQ_SENT:
			cm_enter_timewait(p, CM_TIMEOUT);
			event.event = IB_CM_DREQ_ERROR;
			break;
		case IB_CM_SIDR_REQ_SENT:
			cm_set_state(p, IB_CM_IDLE, CM_TIMEOUT);
			event.event = IB_CM_SIDR_REQ_ERROR;
			break;
		default:
			notify = false;
			break;
		}
	}
	spin_unlock_irq(&p->lock);
	trace_icm_mad_send_err(sent, event.param.send_status);
	if (notify)
		cm_deliver(p, &event);
}

/*
 * ib_cm_notify(COMM_EST) made the id established; its event comes in
 * order with the id's other inputs, so an input before it (a DREQ, say)
 * may have moved on since.  Then the event is stale and not given.
 */
static void cm_process_establish(struct cm_id_priv *p)
{
	struct ib_cm_event event = { .event = IB_CM_USER_ESTABLISHED };
	bool established;

	spin_lock_irq(&p->lock);
	established = p->id.state == IB_CM_ESTABLISHED;
	spin_unlock_irq(&p->lock);
	if (established)
		cm_deliver(p, &event);
}

/**
 * struct cm_msg_ops - how a received message is handled
 * @get: the id it is for, referenced; or NULL if there is none (counted
 *	as unmatched), ERR_PTR(-EINVAL) if a field is out of range (counted),
 *	any other error if it has been dealt with already (answered or
 *	counted).  A REQ, SIDR_REQ or DREQ for no id needs an answer, which
 *	may sleep: without @answer (when it comes in, in the MAD layer's
 *	context) that is ERR_PTR(-EAGAIN), and the MAD goes to its port's
 *	answer queue; with @answer (cm_answer()) it is sent.  A REJ TIMEOUT
 *	for no id is ERR_PTR(-EINPROGRESS): it may be for a REQ that waits
 *	for its listener (cm_rej_with_req())
 * @recv: on the id's queue: the state machine's part
 * @take: instead of @recv on a listener's queue (REQ, SIDR_REQ): makes
 *	the new id and takes the MAD over to it (struct cm_req_work)
 */
struct cm_msg_ops {
	struct cm_id_priv *(*get)(struct cm_port *port,
				  struct ib_mad_recv_wc *recv_wc, bool answer);
	void (*recv)(struct cm_id_priv *p, struct cm_work *work);
	void (*take)(struct cm_id_priv *listen, struct cm_work *work);
};

/* In attribute ID order (REQ = 0x10 ... APR). */
static const struct cm_msg_ops cm_msg_ops[CM_ATTR_COUNT] = {
	{ cm_get_req, cm_dup_req, cm_take_req },
	{ cm_get_mra, cm_recv_mra },
	{ cm_get_rej, cm_recv_rej },
	{ cm_get_rep, cm_recv_rep },
	{ cm_get_rtu, cm_recv_rtu },
	{ cm_get_dreq, cm_recv_dreq },
	{ cm_get_drep, cm_recv_drep },
	{ cm_get_sidr_req, NULL, cm_take_sidr_req },
	{ cm_get_sidr_rep, cm_recv_sidr_rep },
	{ cm_get_lap, cm_recv_lap },
	{ cm_get_apr, cm_recv_apr },
};

/*
 * A received MAD is done with: back to the MAD layer.  A REQ that still
 * waited on its listener's queue lets go of the REJ that waited with it.
 */
static void cm_free_work(struct cm_work *work)
{
	bool req = cm_is_req_work(work->recv_wc);
	struct cm_port *port = work->port;
	struct cm_work *rej = NULL;
	unsigned long flags;

	if (req && cm_req_work(work)->waiting) {
		spin_lock_irqsave(&cm.lock, flags);
		rej = cm_req_taken(cm_req_work(work));
		spin_unlock_irqrestore(&cm.lock, flags);
	}
	port->cm_dev->tp->free_recv(work->recv_wc);
	atomic_dec(&port->backlog);
	if (req)
		kmem_cache_free(cm.req_work_cache, cm_req_work(work));
	else
		kmem_cache_free(cm.work_cache, work);
	cm_pass_on_rej(rej);
}

static void cm_process_input(struct cm_id_priv *p, struct cm_input *in)
{
	const struct cm_msg_ops *ops;
	struct cm_work *work;
	__be16 attr_id;

	switch (in->kind) {
	case CM_INPUT_RECV:
		work = container_of(in, struct cm_work, in);
		attr_id = cm_recv_hdr(work->recv_wc)->attr_id;
		ops = &cm_msg_ops[cm_attr_index(attr_id)];
		if (p->is_listener && ops->take) {
			ops->take(p, work);
			break;
		}
		ops->recv(p, work);
		cm_free_work(work);
		break;
	case CM_INPUT_HANDOVER:
		cm_hand_over(p, container_of(in, struct cm_req_work, work.in));
		break;
	case CM_INPUT_SEND_ERROR:
		cm_process_send_error(p);
		break;
	case CM_INPUT_ESTABLISH:
		cm_process_establish(p);
		break;
	case CM_INPUT_TIMEWAIT:
		cm_timewait_end(p);
		break;
	}
}

/*
 * Backoff schedule: @old, the id's outstanding message, timed out.  If the
 * exchange has resends left, send a copy with the next wait, which takes
 * @old's place as p->msg, and return 0.  Otherwise (or without a buffer
 * for the copy) p->msg stays @old: the send failed.  -ENODEV when @old's
 * agent is being unregistered (its port or device is going away): the
 * caller ends @old as that flush would have.  p->lock held.
 *
 * The copy is allocated atomically (GFP_ATOMIC, in the MAD layer's
 * completion, under p->lock): when that fails, or the post does, the
 * exchange ends early, reported as a timeout of its last send, with
 * resends left over.  The icm_resend_err trace event records each such
 * case, so that an early end can be told from a peer that never answered.
 */
static int cm_resend_locked(struct cm_id_priv *p, struct ib_mad_send_buf *old)
{
	unsigned long window = (unsigned long)old->context[1] & CM_MSG_WINDOW;
	struct cm_ah *ah = cm_msg_ah(old);
	struct cm_port *port = ah->port;
	struct cm_device *cm_dev = port->cm_dev;
	struct ib_mad_send_buf *msg;
	struct ib_mad_agent *agent;
	int ret;

	lockdep_assert_held(&p->lock);
	if (p->policy.schedule != CM_SCHEDULE_BACKOFF ||
	    p->msg_resends >= p->msg_retries)
		return -ETIMEDOUT;
	/*
	 * The agent lock is held from the copy's creation to its post:
	 * cm_ib_drop_agents() either clears the agent first, and there is no
	 * copy, or after the post, and unregistering the agent flushes it.
	 * A copy goes only on @old's own agent, never on one registered
	 * since.
	 */
	read_lock(&cm_dev->agent_lock);
	agent = p->msg_send_only ? port->send_agent : port->mad_agent;
	if (!agent || agent != old->mad_agent) {
		read_unlock(&cm_dev->agent_lock);
		return -ENODEV;
	}
	/*
	 * To the same address as @old, whose handle it holds a reference on
	 * (a destroyed id has let go of its path), on the agent and with the
	 * P_Key index @old was posted with.
	 */
	msg = __cm_port_msg(port, agent, p->id.remote_cm_qpn,
			    p->msg_pkey_index, ah);
	if (IS_ERR(msg)) {
		read_unlock(&cm_dev->agent_lock);
		trace_icm_resend_err(be32_to_cpu(p->id.local_id), p->id.state,
				     PTR_ERR(msg));
		return PTR_ERR(msg);
	}
	memcpy(msg->mad, old->mad, old->hdr_len + old->data_len);
	/* Counted as a resend; a destroyed id's DREQ keeps its window slot. */
	msg->context[1] = (void *)((unsigned long)msg->context[1] |
				   CM_MSG_BACKOFF | window);
	old->context[1] = (void *)((unsigned long)old->context[1] & ~window);
	msg->context[0] = p;
	p->msg_resends++;
	cm_time_msg(p, msg);
	cm_get_id(p);
	ret = cm_dev->tp->post(msg, NULL);
	read_unlock(&cm_dev->agent_lock);
	if (ret) {
		/* The caller's reference (@old's) keeps the id alive. */
		cm_put_id(p);
		old->context[1] = (void *)((unsigned long)old->context[1] |
					   window);
		msg->context[0] = NULL;
		msg->context[1] = cm_msg_ah(msg);
		cm_free_msg(msg);
		trace_icm_resend_err(be32_to_cpu(p->id.local_id), p->id.state,
				     ret);
		return ret;
	}
	p->msg = msg;
	return 0;
}

static void cm_send_handler(struct ib_mad_agent *agent,
			    struct ib_mad_send_wc *wc)
{
	struct ib_mad_send_buf *msg = wc->send_buf;
	struct cm_port *port = agent->context;
	__be16 attr_id = ((struct ib_mad_hdr *)msg->mad)->attr_id;
	enum ib_wc_status status = wc->status;
	int retries = msg->retries;
	struct cm_id_priv *p;
	unsigned long flags;
	int sends;

	if (cm_msg_resent(msg))
		retries = 1;
	sends = 1 + retries;
	/* A resend of the backoff schedule is one send, and a retry. */
	if (cm_msg_backoff(msg))
		retries = 1;
	cm_count(port, CM_XMIT, attr_id, sends);
	if (retries)
		cm_count(port, CM_XMIT_RETRIES, attr_id, retries);

	/* Still the id's outstanding send?  Then it holds a reference. */
	p = xchg(&msg->context[0], NULL);
	if (p) {
		spin_lock_irqsave(&p->lock, flags);
		/*
		 * Backoff: a resend, if any, is p->msg from now on.  None
		 * because the agent is going away: as if flushed.
		 */
		if (p->msg == msg && status == IB_WC_RESP_TIMEOUT_ERR &&
		    cm_resend_locked(p, msg) == -ENODEV)
			status = IB_WC_WR_FLUSH_ERR;
		if (p->msg == msg) {
			p->msg = NULL;
			/*
			 * Flushed: the agent is going away; nothing to tell,
			 * unless the id is destroyed, which its DREQ ending
			 * (in any way) takes to timewait.
			 */
			if (status != IB_WC_SUCCESS &&
			    (status != IB_WC_WR_FLUSH_ERR || p->destroyed)) {
				p->err_state = p->msg_state;
				p->err_status = status;
				cm_queue_own_input_locked(p, &p->err_in);
			}
		}
		spin_unlock_irqrestore(&p->lock, flags);
		cm_put_id(p);
	}
	cm_free_msg(msg);
}

/*
 * A received MAD to be queued, counted in the port's backlog; NULL (and
 * the MAD freed, the drop counted) if the port has too many waiting or
 * no memory.
 */
static struct cm_work *cm_new_work(struct cm_port *port,
				   struct ib_mad_recv_wc *recv_wc)
{
	struct cm_work *work;

	if (atomic_inc_return(&port->backlog) > CM_PORT_BACKLOG) {
		atomic_dec(&port->backlog);
		cm_count_drop(port, CM_DROP_BACKLOG);
		goto free;
	}
	/* Never sleeps: see "How things flow" at the top. */
	if (cm_is_req_work(recv_wc)) {
		struct cm_req_work *rw;

		rw = kmem_cache_alloc(cm.req_work_cache,
				      GFP_NOWAIT | __GFP_NOWARN);
		if (rw) {
			rw->waiting = false;
			rw->rej = NULL;
			rw->listen = NULL;
			rw->id = NULL;
			rw->old = NULL;
			rw->tw_local = 0;
			INIT_WORK(&rw->setup, cm_req_setup);
		}
		work = rw ? &rw->work : NULL;
	} else {
		work = kmem_cache_alloc(cm.work_cache,
					GFP_NOWAIT | __GFP_NOWARN);
	}
	if (!work) {
		atomic_dec(&port->backlog);
		cm_count_drop(port, CM_DROP_NOMEM);
		goto free;
	}
	work->in.kind = CM_INPUT_RECV;
	work->port = port;
	work->recv_wc = recv_wc;
	return work;

free:
	port->cm_dev->tp->free_recv(recv_wc);
	return NULL;
}

/* Count a lookup that found no id: nobody, a bad field, or answered. */
static void cm_count_found(struct cm_port *port, struct cm_id_priv *p)
{
	if (!p)
		cm_count_drop(port, CM_DROP_UNMATCHED);
	else if (PTR_ERR(p) == -EINVAL)
		cm_count_drop(port, CM_DROP_FIELD);
}

/* Queue @work on the id @p it is for. */
static void cm_queue_found(struct cm_id_priv *p, struct cm_work *work)
{
	if (p->is_listener &&
	    cm_recv_hdr(work->recv_wc)->attr_id == CM_REQ_ATTR_ID)
		cm_req_waits(cm_req_work(work));
	if (!cm_queue_recv(p, work)) {
		cm_count_drop(work->port, CM_DROP_BACKLOG);
		cm_free_work(work);
	}
}

/* Queue @work on its port's answer queue (cm_answer_work()). */
static void cm_queue_answer(struct cm_work *work)
{
	struct cm_port *port = work->port;
	unsigned long flags;
	bool queued;

	if (cm_recv_hdr(work->recv_wc)->attr_id == CM_REQ_ATTR_ID)
		cm_req_waits(cm_req_work(work));
	spin_lock_irqsave(&port->answer_lock, flags);
	queued = port->nr_answers < CM_ANSWER_BACKLOG;
	if (queued) {
		work->queued = jiffies;
		list_add_tail(&work->in.list, &port->answers);
		port->nr_answers++;
	}
	spin_unlock_irqrestore(&port->answer_lock, flags);
	if (!queued) {
		cm_count_drop(port, CM_DROP_BACKLOG);
		cm_free_work(work);
		return;
	}
	queue_work(cm.wq, &port->answer_work);
}

/*
 * A REJ TIMEOUT for which no connection is known: its sender's REQ may
 * still wait on a listener's queue, where no id is made for it yet.  Then
 * it waits with the REQ, and goes where the REQ leads; otherwise (the REQ
 * was taken up meanwhile, or there is none) on at once.
 */
static void cm_rej_with_req(struct cm_work *work)
{
	struct cm_rej_msg *rej = cm_recv_msg(work);
	struct cm_remote_key key;
	struct cm_req_work *rw;
	unsigned long flags;
	__be64 guid;

	memcpy(&guid, IBA_GET_MEM_PTR(CM_REJ_ARI, rej), sizeof(guid));
	cm_remote_key(&key, cpu_to_be32(IBA_GET(CM_REJ_LOCAL_COMM_ID, rej)),
		      guid);
	spin_lock_irqsave(&cm.lock, flags);
	rw = rhashtable_lookup_fast(&cm.waiting_reqs, &key, cm_waiting_params);
	if (rw && !rw->rej) {
		rw->rej = work;
		work = NULL;
	}
	spin_unlock_irqrestore(&cm.lock, flags);
	cm_pass_on_rej(work);
}

/* First checks on a received MAD, before it is queued. */
static int cm_check_mad(struct ib_mad_recv_wc *recv_wc)
{
	const struct ib_mad_hdr *hdr = &recv_wc->recv_buf.mad->mad_hdr;

	if (recv_wc->mad_len < IB_MGMT_MAD_SIZE)
		return CM_DROP_LENGTH;
	if (hdr->base_version != IB_MGMT_BASE_VERSION ||
	    hdr->mgmt_class != IB_MGMT_CLASS_CM ||
	    hdr->class_version != CM_CLASS_VERSION)
		return CM_DROP_VERSION;
	if (hdr->method != IB_MGMT_METHOD_SEND)
		return CM_DROP_METHOD;
	if (!cm_attr_valid(hdr->attr_id))
		return CM_DROP_ATTR;
	return -1;
}

static void cm_recv_handler(struct ib_mad_agent *agent,
			    struct ib_mad_send_buf *send_buf,
			    struct ib_mad_recv_wc *recv_wc)
{
	struct cm_port *port = agent->context;
	const struct cm_msg_ops *ops;
	struct cm_work *work;
	struct cm_id_priv *p;
	int why;

	why = cm_check_mad(recv_wc);
	if (why >= 0) {
		cm_count_drop(port, why);
		port->cm_dev->tp->free_recv(recv_wc);
		return;
	}
	cm_count(port, CM_RECV, cm_recv_hdr(recv_wc)->attr_id, 1);

	ops = &cm_msg_ops[cm_attr_index(cm_recv_hdr(recv_wc)->attr_id)];
	p = ops->get(port, recv_wc, false);
	if (p == ERR_PTR(-EAGAIN)) {
		/* Answered on cm.wq: see "How things flow" at the top. */
		work = cm_new_work(port, recv_wc);
		if (work)
			cm_queue_answer(work);
	} else if (p == ERR_PTR(-EINPROGRESS)) {
		work = cm_new_work(port, recv_wc);
		if (work)
			cm_rej_with_req(work);
	} else if (IS_ERR_OR_NULL(p)) {
		cm_count_found(port, p);
		port->cm_dev->tp->free_recv(recv_wc);
	} else {
		work = cm_new_work(port, recv_wc);
		if (work)
			cm_queue_found(p, work);
		cm_put_id(p);
	}
}

/* Answers cm_answer_work() makes before it lets other work run. */
#define CM_ANSWER_BATCH		16

/*
 * One MAD of the answer queue.  It is looked up again, as an id may have
 * come for it since; if none has, it is answered, unless it waited too
 * long (then dropped and counted) or the port is going away.
 */
static void cm_answer(struct cm_port *port, struct cm_work *work)
{
	__be16 attr_id = cm_recv_hdr(work->recv_wc)->attr_id;
	const struct cm_msg_ops *ops = &cm_msg_ops[cm_attr_index(attr_id)];
	bool fresh = time_before_eq(jiffies, work->queued + CM_ANSWER_MAX_AGE);
	struct cm_id_priv *p = ERR_PTR(-ENODEV);

	if (READ_ONCE(port->mad_agent))
		p = ops->get(port, work->recv_wc, fresh);
	/* Waited too long, or the port is going away: unanswered. */
	if (p == ERR_PTR(-EAGAIN) || p == ERR_PTR(-ENODEV))
		cm_count_drop(port, CM_DROP_BACKLOG);
	if (IS_ERR_OR_NULL(p)) {
		cm_count_found(port, p);
		cm_free_work(work);
	} else {
		cm_queue_found(p, work);
		cm_put_id(p);
	}
}

/*
 * A port's answers to the messages that nobody's id takes, one by one, at
 * most CM_ANSWER_BATCH a run: a peer that keeps them coming must not keep
 * the worker (cm.wq's rescuer, under memory pressure) for ever.
 */
static void cm_answer_work(struct work_struct *w)
{
	struct cm_port *port = container_of(w, struct cm_port, answer_work);
	struct cm_work *work;
	unsigned int n;

	for (n = 0; n < CM_ANSWER_BATCH; n++) {
		spin_lock_irq(&port->answer_lock);
		work = list_first_entry_or_null(&port->answers, struct cm_work,
						in.list);
		if (work) {
			list_del(&work->in.list);
			port->nr_answers--;
		}
		spin_unlock_irq(&port->answer_lock);
		if (!work)
			return;
		cm_answer(port, work);
	}
	queue_work(cm.wq, &port->answer_work);
}

/* ---------------------------------------------------------------------
 * The API: creating and listening
 *
 * The exported functions are documented in include/rdma/ib_cm.h.
 */

struct ib_cm_id *ib_create_cm_id(struct ib_device *device,
				 ib_cm_handler cm_handler, void *context)
{
	struct cm_id_priv *p;

	if (!device || !cm_handler) {
		pr_warn_ratelimited("%s without %s\n", __func__,
				    device ? "handler" : "device");
		return ERR_PTR(-EINVAL);
	}
	p = cm_alloc_id(device, cm_handler, context, true, GFP_KERNEL);
	if (IS_ERR(p))
		return ERR_CAST(p);
	return &p->id;
}
EXPORT_SYMBOL(ib_create_cm_id);

static int cm_listen_locked(struct cm_id_priv *p, __be64 service_id)
{
	int ret;

	lockdep_assert_held(&p->lock);

	lockdep_assert_held(&cm.lock);
	if (service_id == IB_CM_ASSIGN_SERVICE_ID) {
		do {
			service_id = cpu_to_be64(cm.next_service_id++);
		} while (cm_find_listen(p->id.device, service_id));
	} else if (cm_find_listen(p->id.device, service_id)) {
		return -EBUSY;
	}
	p->id.service_id = service_id;
	/* Before a REQ can find it: cm_queue_found() reads the mark. */
	p->is_listener = true;
	ret = cm_insert_listen(p);
	if (ret) {
		p->is_listener = false;
		p->id.service_id = 0;
		return ret;
	}
	cm_set_state(p, IB_CM_LISTEN, CM_LISTEN);
	p->listen_sharecount = 1;
	return 0;
}

int ib_cm_listen(struct ib_cm_id *cm_id, __be64 service_id)
{
	struct cm_id_priv *p = to_priv(cm_id);
	int ret = -EINVAL;

	/* Only the assign request itself may use the reserved range. */
	if ((service_id & IB_SERVICE_ID_AGN_MASK) == IB_CM_ASSIGN_SERVICE_ID &&
	    service_id != IB_CM_ASSIGN_SERVICE_ID)
		return -EINVAL;

	spin_lock_irq(&p->lock);
	if (p->id.state == IB_CM_IDLE && !p->destroyed) {
		spin_lock(&cm.lock);
		ret = cm_listen_locked(p, service_id);
		spin_unlock(&cm.lock);
	}
	spin_unlock_irq(&p->lock);
	return ret;
}
EXPORT_SYMBOL(ib_cm_listen);

struct ib_cm_id *ib_cm_insert_listen(struct ib_device *device,
				     ib_cm_handler cm_handler,
				     __be64 service_id)
{
	struct cm_id_priv *p, *old;
	struct ib_cm_id *cm_id;
	int ret = 0;

	/* Only the assign request itself may use the reserved range. */
	if ((service_id & IB_SERVICE_ID_AGN_MASK) == IB_CM_ASSIGN_SERVICE_ID &&
	    service_id != IB_CM_ASSIGN_SERVICE_ID)
		return ERR_PTR(-EINVAL);

	cm_id = ib_create_cm_id(device, cm_handler, NULL);
	if (IS_ERR(cm_id))
		return cm_id;
	p = to_priv(cm_id);

	spin_lock_irq(&p->lock);
	spin_lock(&cm.lock);
	/* An assigned ID is new: a listener of its own, as with the stock CM. */
	old = service_id == IB_CM_ASSIGN_SERVICE_ID ? NULL :
	      cm_find_listen(device, service_id);
	if (old) {
		/* A listener in the tree has users; share it if we may. */
		if (old->id.cm_handler == cm_handler && !old->id.context &&
		    refcount_inc_not_zero(&old->refcount))
			old->listen_sharecount++;
		else
			ret = -EINVAL;
	} else {
		ret = cm_listen_locked(p, service_id);
	}
	spin_unlock(&cm.lock);
	spin_unlock_irq(&p->lock);

	if (!old && !ret)
		return cm_id;
	cm_destroy(p, 0);
	return ret ? ERR_PTR(ret) : &old->id;
}
EXPORT_SYMBOL(ib_cm_insert_listen);

/* ---------------------------------------------------------------------
 * The API: connection messages
 */

/* Private data must fit its message; a caller's mistake is worth a note. */
static bool cm_data_fits(const char *func, const void *data, u8 len, u8 max)
{
	if (!data || len <= max)
		return true;
	pr_warn_ratelimited("%s: %u bytes of private data, at most %u fit\n",
			    func, len, max);
	return false;
}

static int cm_check_req_param(struct ib_cm_req_param *param)
{
	struct sa_path_rec *pri = param->primary_path;
	struct sa_path_rec *alt = param->alternate_path;

	if (!pri)
		return -EINVAL;
	if (param->qp_type != IB_QPT_RC && param->qp_type != IB_QPT_UC &&
	    param->qp_type != IB_QPT_XRC_INI)
		return -EINVAL;
	if (!cm_data_fits(__func__, param->private_data, param->private_data_len,
			  IB_CM_REQ_PRIVATE_DATA_SIZE))
		return -EINVAL;
	if (alt && (alt->pkey != pri->pkey || alt->mtu != pri->mtu))
		return -EINVAL;
	return 0;
}

/* The LIDs a REQ carries for one path. */
static void cm_req_lids(struct sa_path_rec *path, struct sa_path_rec *inbound,
			u16 *local, u16 *remote)
{
	if (path->hop_limit <= 1) {
		*local = be32_to_cpu(sa_path_get_slid(path));
		*remote = be32_to_cpu(sa_path_get_dlid(path));
		return;
	}
	/* Routed: our LID as the peer sees it, if known; the peer's is not. */
	*local = inbound ? be16_to_cpu(inbound->ib.dlid) : 0xffff;
	*remote = 0xffff;
}

/* The primary path of a REQ we send. */
static void cm_format_req_primary(struct cm_req_msg *req,
				  struct ib_cm_req_param *param, u8 ack_delay)
{
	struct sa_path_rec *pri = param->primary_path;
	u16 llid, rlid;

	*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, req) = pri->sgid;
	*IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req) = pri->dgid;
	cm_req_lids(pri, param->primary_path_inbound, &llid, &rlid);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_PORT_LID, req, llid);
	IBA_SET(CM_REQ_PRIMARY_REMOTE_PORT_LID, req, rlid);
	IBA_SET(CM_REQ_PRIMARY_FLOW_LABEL, req, be32_to_cpu(pri->flow_label));
	IBA_SET(CM_REQ_PRIMARY_PACKET_RATE, req, pri->rate);
	IBA_SET(CM_REQ_PRIMARY_TRAFFIC_CLASS, req, pri->traffic_class);
	IBA_SET(CM_REQ_PRIMARY_HOP_LIMIT, req, pri->hop_limit);
	IBA_SET(CM_REQ_PRIMARY_SL, req, pri->sl);
	IBA_SET(CM_REQ_PRIMARY_SUBNET_LOCAL, req, pri->hop_limit <= 1);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, req,
		cm_ack_timeout(ack_delay, pri->packet_life_time));
}

/* The alternate path of a REQ we send. */
static void cm_format_req_alternate(struct cm_req_msg *req,
				    struct sa_path_rec *alt, u8 ack_delay)
{
	u16 llid, rlid;

	*IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID, req) = alt->sgid;
	*IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_REMOTE_PORT_GID, req) = alt->dgid;
	cm_req_lids(alt, NULL, &llid, &rlid);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req, llid);
	IBA_SET(CM_REQ_ALTERNATE_REMOTE_PORT_LID, req, rlid);
	IBA_SET(CM_REQ_ALTERNATE_FLOW_LABEL, req, be32_to_cpu(alt->flow_label));
	IBA_SET(CM_REQ_ALTERNATE_PACKET_RATE, req, alt->rate);
	IBA_SET(CM_REQ_ALTERNATE_TRAFFIC_CLASS, req, alt->traffic_class);
	IBA_SET(CM_REQ_ALTERNATE_HOP_LIMIT, req, alt->hop_limit);
	IBA_SET(CM_REQ_ALTERNATE_SL, req, alt->sl);
	IBA_SET(CM_REQ_ALTERNATE_SUBNET_LOCAL, req, alt->hop_limit <= 1);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, req,
		cm_ack_timeout(ack_delay, alt->packet_life_time));
}

/* The response timeout our REQ asks the peer for, under p->policy. */
static u8 cm_req_response_timeout(struct cm_id_priv *p,
				  struct ib_cm_req_param *param)
{
	return cm_policy_timeout(&p->policy,
				 cm_clamp(param->remote_cm_response_timeout, 5));
}

static void cm_format_req(struct cm_req_msg *req, struct cm_id_priv *p,
			  struct ib_cm_req_param *param)
{
	struct sa_path_rec *pri = param->primary_path;
	u8 ack_delay = p->av.port->cm_dev->ack_delay;
	unsigned int transport = CM_REQ_TRANSPORT_RC;

	cm_init_mad(&req->hdr, CM_REQ_ATTR_ID, p->tid);
	req->hdr.attr_mod = cpu_to_be32(param->ece.attr_mod);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, be32_to_cpu(p->id.local_id));
	IBA_SET(CM_REQ_VENDOR_ID, req, param->ece.vendor_id);
	IBA_SET(CM_REQ_SERVICE_ID, req, be64_to_cpu(param->service_id));
	IBA_SET(CM_REQ_LOCAL_CA_GUID, req,
		be64_to_cpu(p->id.device->node_guid));
	IBA_SET(CM_REQ_LOCAL_QPN, req, param->qp_num);
	IBA_SET(CM_REQ_INITIATOR_DEPTH, req, param->initiator_depth);
	IBA_SET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, req,
		cm_req_response_timeout(p, param));
	if (param->qp_type == IB_QPT_XRC_INI) {
		transport = CM_REQ_TRANSPORT_EXTENDED;
		IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, req,
			CM_REQ_EXT_TRANSPORT_XRC);
	} else {
		if (param->qp_type == IB_QPT_UC)
			transport = CM_REQ_TRANSPORT_UC;
		IBA_SET(CM_REQ_RESPONDER_RESOURCES, req,
			param->responder_resources);
		IBA_SET(CM_REQ_RETRY_COUNT, req, p->retry_count);
		IBA_SET(CM_REQ_RNR_RETRY_COUNT, req, p->rnr_retry_count);
		IBA_SET(CM_REQ_SRQ, req, param->srq);
	}
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, transport);
	IBA_SET(CM_REQ_END_TO_END_FLOW_CONTROL, req, param->flow_control);
	IBA_SET(CM_REQ_STARTING_PSN, req, param->starting_psn);
	IBA_SET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, req,
		cm_clamp(param->local_cm_response_timeout, 5));
	IBA_SET(CM_REQ_PARTITION_KEY, req, be16_to_cpu(pri->pkey));
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, pri->mtu);
	IBA_SET(CM_REQ_MAX_CM_RETRIES, req, p->max_cm_retries);
	cm_format_req_primary(req, param, ack_delay);
	if (param->alternate_path)
		cm_format_req_alternate(req, param->alternate_path, ack_delay);
	IBA_SET_MEM(CM_REQ_PRIVATE_DATA, req, param->private_data,
		    param->private_data_len);
}

int ib_send_cm_req(struct ib_cm_id *cm_id, struct ib_cm_req_param *param)
{
	struct cm_id_priv *p = to_priv(cm_id);
	struct cm_av av = {}, alt_av = {};
	struct ib_mad_send_buf *msg;
	int ret;

	ret = param ? cm_check_req_param(param) : -EINVAL;
	if (ret) {
		pr_warn_ratelimited("%s: invalid parameters\n", __func__);
		return ret;
	}

	/* Resolving the paths may sleep: do it before taking the lock. */
	ret = cm_av_from_path(&av, param->primary_path, param->ppath_sgid_attr);
	if (ret)
		goto out;
	if (param->alternate_path) {
		ret = cm_av_from_path(&alt_av, param->alternate_path, NULL);
		if (ret)
			goto out;
	}

	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_IDLE || p->destroyed) {
		ret = -EINVAL;
		goto unlock;
	}
	cm_av_move(&p->av, &av);
	if (param->primary_path_outbound)
		p->av.dlid_datapath =
			be16_to_cpu(param->primary_path_outbound->ib.dlid);
	if (param->alternate_path)
		cm_av_move(&p->alt_av, &alt_av);
	p->id.service_id = param->service_id;
	/* What the REQ advertises is what the policy allows. */
	cm_take_policy(p);
	p->timeout_ms = 2 * cm_iba_to_ms(param->primary_path->packet_life_time) +
		cm_iba_to_ms(cm_req_response_timeout(p, param));
	p->timeout_is_peers = false;
	p->max_cm_retries = cm_policy_retries(&p->policy,
					      cm_clamp(param->max_cm_retries, 4));
	p->initiator_depth = param->initiator_depth;
	p->responder_resources = param->responder_resources;
	p->retry_count = cm_clamp(param->retry_count, 3);
	p->rnr_retry_count = cm_clamp(param->rnr_retry_count, 3);
	p->path_mtu = param->primary_path->mtu;
	p->pkey = param->primary_path->pkey;
	p->qp_type = param->qp_type;
	p->local_qpn = cpu_to_be32(param->qp_num & 0xffffff);
	p->rq_psn = cpu_to_be32(param->starting_psn & 0xffffff);
	p->id.remote_id = 0;
	p->tid = cm_new_tid();

	msg = cm_alloc_msg(p, false);
	if (IS_ERR(msg)) {
		ret = PTR_ERR(msg);
		goto unlock;
	}
	cm_format_req(msg->mad, p, param);
	trace_icm_send_req(&p->id);
	ret = cm_post_tracked(p, msg, false, IB_CM_REQ_SENT);
	if (!ret)
		cm_set_state(p, IB_CM_REQ_SENT, CM_SEND_REQ);
unlock:
	spin_unlock_irq(&p->lock);
out:
	cm_av_release(&av);
	cm_av_release(&alt_av);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_req);

static void cm_format_rep(struct cm_rep_msg *rep, struct cm_id_priv *p,
			  struct ib_cm_rep_param *param)
{
	cm_init_mad(&rep->hdr, CM_REP_ATTR_ID, p->tid);
	rep->hdr.attr_mod = cpu_to_be32(param->ece.attr_mod);
	IBA_SET(CM_REP_LOCAL_COMM_ID, rep, be32_to_cpu(p->id.local_id));
	IBA_SET(CM_REP_REMOTE_COMM_ID, rep, be32_to_cpu(p->id.remote_id));
	IBA_SET(CM_REP_STARTING_PSN, rep, param->starting_psn);
	IBA_SET(CM_REP_RESPONDER_RESOURCES, rep, param->responder_resources);
	IBA_SET(CM_REP_TARGET_ACK_DELAY, rep, p->av.port->cm_dev->ack_delay);
	IBA_SET(CM_REP_FAILOVER_ACCEPTED, rep, param->failover_accepted);
	IBA_SET(CM_REP_RNR_RETRY_COUNT, rep,
		cm_clamp(param->rnr_retry_count, 3));
	IBA_SET(CM_REP_LOCAL_CA_GUID, rep,
		be64_to_cpu(p->id.device->node_guid));
	if (p->qp_type == IB_QPT_XRC_TGT) {
		/* An XRC target has no send side; it always uses an SRQ. */
		IBA_SET(CM_REP_SRQ, rep, 1);
		IBA_SET(CM_REP_LOCAL_EE_CONTEXT_NUMBER, rep, param->qp_num);
	} else {
		IBA_SET(CM_REP_INITIATOR_DEPTH, rep, param->initiator_depth);
		IBA_SET(CM_REP_END_TO_END_FLOW_CONTROL, rep,
			param->flow_control);
		IBA_SET(CM_REP_SRQ, rep, param->srq);
		IBA_SET(CM_REP_LOCAL_QPN, rep, param->qp_num);
	}
	IBA_SET(CM_REP_VENDOR_ID_H, rep, param->ece.vendor_id >> 16);
	IBA_SET(CM_REP_VENDOR_ID_M, rep, param->ece.vendor_id >> 8);
	IBA_SET(CM_REP_VENDOR_ID_L, rep, param->ece.vendor_id);
	IBA_SET_MEM(CM_REP_PRIVATE_DATA, rep, param->private_data,
		    param->private_data_len);
}

int ib_send_cm_rep(struct ib_cm_id *cm_id, struct ib_cm_rep_param *param)
{
	struct cm_id_priv *p = to_priv(cm_id);
	struct ib_mad_send_buf *msg;
	unsigned long flags;
	int ret;

	if (!param ||
	    !cm_data_fits(__func__, param->private_data, param->private_data_len,
			  IB_CM_REP_PRIVATE_DATA_SIZE))
		return -EINVAL;

	spin_lock_irqsave(&p->lock, flags);
	if ((p->id.state != IB_CM_REQ_RCVD &&
	     p->id.state != IB_CM_MRA_REQ_SENT) || p->destroyed) {
		trace_icm_send_rep_err(be32_to_cpu(p->id.local_id), p->id.state);
		ret = -EINVAL;
		goto out;
	}
	msg = cm_alloc_msg(p, true);
	if (IS_ERR(msg)) {
		ret = PTR_ERR(msg);
		goto out;
	}
	cm_take_policy(p);
	cm_format_rep(msg->mad, p, param);
	trace_icm_send_rep(&p->id);
	ret = cm_post_tracked(p, msg, true, IB_CM_REP_SENT);
	if (ret)
		goto out;
	cm_set_state(p, IB_CM_REP_SENT, CM_SEND_REP);
	p->initiator_depth = param->initiator_depth;
	p->responder_resources = param->responder_resources;
	p->rq_psn = cpu_to_be32(param->starting_psn & 0xffffff);
	p->local_qpn = cpu_to_be32(param->qp_num & 0xffffff);
out:
	spin_unlock_irqrestore(&p->lock, flags);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_rep);

/*
 * A copy of the private data of an RTU or DREP, kept to send it again
 * with them (as the stock CM does), or NULL.  Without memory for it the
 * message goes out all the same, and a repeat of it would go without the
 * data; the call does not sleep for it.
 */
static void *cm_copy_data(const void *data, u8 len)
{
	if (!data || !len)
		return NULL;
	return kmemdup(data, len, GFP_ATOMIC | __GFP_NOWARN);
}

int ib_send_cm_rtu(struct ib_cm_id *cm_id, const void *private_data,
		   u8 private_data_len)
{
	struct cm_id_priv *p = to_priv(cm_id);
	struct ib_mad_send_buf *msg;
	unsigned long flags;
	void *copy;
	int ret;

	if (!cm_data_fits(__func__, private_data, private_data_len,
			  IB_CM_RTU_PRIVATE_DATA_SIZE))
		return -EINVAL;
	copy = cm_copy_data(private_data, private_data_len);

	spin_lock_irqsave(&p->lock, flags);
	if ((p->id.state != IB_CM_REP_RCVD &&
	     p->id.state != IB_CM_MRA_REP_SENT) || p->destroyed) {
		trace_icm_send_cm_rtu_err(&p->id);
		ret = -EINVAL;
		goto out;
	}
	msg = cm_alloc_msg(p, false);
	if (IS_ERR(msg)) {
		ret = PTR_ERR(msg);
		goto out;
	}
	cm_format_rtu(msg->mad, p, private_data, private_data_len);
	trace_icm_send_rtu(&p->id);
	ret = cm_post_oneshot(msg);
	if (!ret) {
		cm_set_state(p, IB_CM_ESTABLISHED, CM_SEND_RTU);
		cm_keep_data_locked(p, copy, private_data_len);
		copy = NULL;
	}
out:
	spin_unlock_irqrestore(&p->lock, flags);
	kfree(copy);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_rtu);

/*
 * A destroyed id's DREQ (see cm_send_dreq_locked()) is retried at most
 * CM_DESTROY_RETRIES times, and at most cm_destroy_window of them are
 * retried on a port at once (the MAD layer's own window for the CM agent,
 * which the send-only agent does not have); past that it goes out once,
 * as the stock module's does.  So a process that exits with thousands of
 * connections to peers that are gone sends at most about four times the
 * stock module's DREQs, not 16 times.
 */
#define CM_DESTROY_RETRIES	3
/*
 * ... and, on the passive side, starts from a wait of at most this long
 * for the DREP (IBA's encoding: rdma_cm's own 20, 4096 ms as
 * cm_iba_to_ms() converts it), whatever the peer's REQ said it may take:
 * a peer that claims hours must not hold the id, nor its place in the
 * window.  The active side's wait is its consumer's, not the peer's.  A
 * user's DREQ that is out when the id is destroyed waits no longer either
 * (cm_limit_sent_dreq()).
 */
#define CM_DESTROY_TIMEOUT	20
static unsigned int cm_destroy_window = 128;

/* A destroyed id's wait that the peer set: CM_DESTROY_TIMEOUT's at most. */
static void cm_cut_destroyed_wait(struct cm_id_priv *p)
{
	lockdep_assert_held(&p->lock);
	if (p->timeout_is_peers)
		p->timeout_ms = min(p->timeout_ms,
				    cm_iba_to_ms(CM_DESTROY_TIMEOUT));
}

static void cm_limit_destroy_dreq(struct cm_id_priv *p,
				  struct ib_mad_send_buf *msg)
{
	struct cm_port *port = cm_msg_ah(msg)->port;

	lockdep_assert_held(&p->lock);
	cm_cut_destroyed_wait(p);
	if (atomic_inc_return(&port->destroy_dreqs) <=
	    READ_ONCE(cm_destroy_window)) {
		p->max_cm_retries = min_t(u8, p->max_cm_retries,
					  CM_DESTROY_RETRIES);
		msg->context[1] = (void *)((unsigned long)msg->context[1] |
					   CM_MSG_WINDOW);
	} else {
		atomic_dec(&port->destroy_dreqs);
		p->max_cm_retries = 0;
	}
}

/*
 * Destroyed in DREQ_SENT: the user's DREQ is out already, on the CM agent
 * with its own retries, and goes on so; but a wait the peer set is cut
 * from now on to CM_DESTROY_TIMEOUT's, as for the DREQ destroy sends
 * itself.  p->lock held.
 */
static void cm_limit_sent_dreq(struct cm_id_priv *p)
{
	lockdep_assert_held(&p->lock);
	cm_cut_destroyed_wait(p);
	/* Only a wait the peer set is longer than timeout_ms now. */
	if (p->msg_timeout_ms > p->timeout_ms)
		cm_extend_msg(p, p->timeout_ms);
}

/*
 * ESTABLISHED: send a retried DREQ, for @cause (the user, the CM for a
 * stale connection, or destroy).  If it cannot be posted, go to timewait
 * at once.  p->lock held.
 *
 * Destroy's DREQ goes out on the send-only agent, which the MAD layer's
 * flow control leaves alone: a process that exits destroys all its
 * connections at once, and on the CM agent all but the first 128 of
 * their DREQs would wait for answers to those, or for their timeouts
 * when the peers are gone; a device removed meanwhile drops them unsent.
 */
static int cm_send_dreq_locked(struct cm_id_priv *p, const void *data,
			       u8 len, enum cm_cause cause)
{
	struct ib_mad_send_buf *msg;
	int ret;

	lockdep_assert_held(&p->lock);
	/* A LAP in flight is abandoned. */
	cm_cancel_msg(p);
	msg = cm_alloc_msg(p, cause == CM_DESTROY);
	if (IS_ERR(msg)) {
		cm_enter_timewait(p, cause);
		return PTR_ERR(msg);
	}
	cm_take_policy(p);
	cm_format_dreq(msg->mad, p, data, len);
	trace_icm_send_dreq(&p->id);
	if (cause == CM_DESTROY)
		cm_limit_destroy_dreq(p, msg);
	ret = cm_post_tracked(p, msg, cause == CM_DESTROY,
			      IB_CM_DREQ_SENT);
	if (ret) {
		cm_enter_timewait(p, cause);
		return ret;
	}
	cm_set_state(p, IB_CM_DREQ_SENT, cause);
	return 0;
}

static int cm_send_dreq(struct cm_id_priv *p, const void *data, u8 len,
			enum cm_cause cause)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&p->lock, flags);
	if (p->id.state != IB_CM_ESTABLISHED || p->destroyed) {
		trace_icm_dreq_skipped(&p->id);
		ret = -EINVAL;
	} else {
		ret = cm_send_dreq_locked(p, data, len, cause);
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return ret;
}

int ib_send_cm_dreq(struct ib_cm_id *cm_id, const void *private_data,
		    u8 private_data_len)
{
	if (!cm_data_fits(__func__, private_data, private_data_len,
			  IB_CM_DREQ_PRIVATE_DATA_SIZE))
		return -EINVAL;
	return cm_send_dreq(to_priv(cm_id), private_data, private_data_len,
			    CM_SEND_DREQ);
}
EXPORT_SYMBOL(ib_send_cm_dreq);

/*
 * A new connection came from a remote QP that @old still believes to be
 * its peer: @old is stale, and is disconnected if it is established.
 */
static void cm_disconnect_stale(struct cm_id_priv *old)
{
	cm_send_dreq(old, NULL, 0, CM_STALE_CONN);
}

/*
 * DREQ_RCVD: answer with a DREP and enter timewait, for @cause (the
 * user's DREP, or destroy).  A repeated DREQ gets the DREP again with
 * @data, of which @copy is the id's copy (NULL for none), taken over here.
 * p->lock held.
 */
static int cm_send_drep_locked(struct cm_id_priv *p, const void *data, u8 len,
			       void *copy, enum cm_cause cause)
{
	struct ib_mad_send_buf *msg;
	int ret;

	lockdep_assert_held(&p->lock);
	cm_keep_data_locked(p, copy, len);

	msg = cm_alloc_msg(p, false);
	if (IS_ERR(msg)) {
		cm_enter_timewait(p, cause);
		return PTR_ERR(msg);
	}
	cm_format_drep(msg->mad, p->id.local_id, p->id.remote_id,
		       p->tid, data, len);
	trace_icm_send_drep(&p->id);
	ret = cm_post_oneshot(msg);
	cm_enter_timewait(p, cause);
	return ret;
}

int ib_send_cm_drep(struct ib_cm_id *cm_id, const void *private_data,
		    u8 private_data_len)
{
	struct cm_id_priv *p = to_priv(cm_id);
	unsigned long flags;
	void *copy;
	int ret;

	if (!cm_data_fits(__func__, private_data, private_data_len,
			  IB_CM_DREP_PRIVATE_DATA_SIZE))
		return -EINVAL;
	copy = cm_copy_data(private_data, private_data_len);

	spin_lock_irqsave(&p->lock, flags);
	if (p->id.state != IB_CM_DREQ_RCVD || p->destroyed) {
		trace_icm_send_drep_err(&p->id);
		ret = -EINVAL;
	} else {
		ret = cm_send_drep_locked(p, private_data, private_data_len,
					  copy, CM_SEND_DREP);
		copy = NULL;
	}
	spin_unlock_irqrestore(&p->lock, flags);
	kfree(copy);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_drep);

int ib_send_cm_rej(struct ib_cm_id *cm_id, enum ib_cm_rej_reason reason,
		   void *ari, u8 ari_length, const void *private_data,
		   u8 private_data_len)
{
	struct cm_id_priv *p = to_priv(cm_id);
	unsigned long flags;
	int ret = 0;

	if (!cm_data_fits(__func__, private_data, private_data_len,
			  IB_CM_REJ_PRIVATE_DATA_SIZE) ||
	    (ari && ari_length > IB_CM_REJ_ARI_LENGTH))
		return -EINVAL;

	spin_lock_irqsave(&p->lock, flags);
	if (p->destroyed) {
		ret = -EINVAL;
		goto out;
	}
	switch (p->id.state) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
	case IB_CM_REQ_RCVD:
	case IB_CM_MRA_REQ_SENT:
	case IB_CM_REP_RCVD:
	case IB_CM_MRA_REP_SENT:
		cm_cancel_msg(p);
		cm_send_rej_locked(p, reason, ari, ari_length, private_data,
				   private_data_len);
		cm_reset_to_idle(p, CM_SEND_REJ);
		break;
	case IB_CM_REP_SENT:
	case IB_CM_MRA_REP_RCVD:
		cm_cancel_msg(p);
		cm_send_rej_locked(p, reason, ari, ari_length, private_data,
				   private_data_len);
		cm_enter_timewait(p, CM_SEND_REJ);
		break;
	default:
		trace_icm_send_unknown_rej_err(&p->id);
		ret = -EINVAL;
		break;
	}
out:
	spin_unlock_irqrestore(&p->lock, flags);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_rej);

int ib_prepare_cm_mra(struct ib_cm_id *cm_id)
{
	struct cm_id_priv *p = to_priv(cm_id);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&p->lock, flags);
	switch (p->id.state) {
	case IB_CM_REQ_RCVD:
		cm_set_state(p, IB_CM_MRA_REQ_SENT, CM_PREPARE_MRA);
		break;
	case IB_CM_REP_RCVD:
		cm_set_state(p, IB_CM_MRA_REP_SENT, CM_PREPARE_MRA);
		break;
	case IB_CM_ESTABLISHED:
		if (p->id.lap_state == IB_CM_LAP_RCVD) {
			cm_set_lap_state(p, IB_CM_MRA_LAP_SENT, CM_PREPARE_MRA);
			break;
		}
		fallthrough;
	default:
		trace_icm_prepare_mra_unknown_err(&p->id);
		ret = -EINVAL;
		break;
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return ret;
}
EXPORT_SYMBOL(ib_prepare_cm_mra);

/* ---------------------------------------------------------------------
 * The API: SIDR
 */

int ib_send_cm_sidr_req(struct ib_cm_id *cm_id,
			struct ib_cm_sidr_req_param *param)
{
	struct cm_id_priv *p = to_priv(cm_id);
	struct ib_mad_send_buf *msg;
	struct cm_sidr_req_msg *req;
	struct cm_av av = {};
	int ret;

	if (!param || !param->path ||
	    !cm_data_fits(__func__, param->private_data,
			  param->private_data_len,
			  IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE))
		return -EINVAL;

	ret = cm_av_from_path(&av, param->path, param->sgid_attr);
	if (ret)
		goto out;

	spin_lock_irq(&p->lock);
	if (p->id.state != IB_CM_IDLE || p->destroyed) {
		ret = -EINVAL;
		goto unlock;
	}
	cm_av_move(&p->av, &av);
	p->id.service_id = param->service_id;
	p->timeout_ms = min_t(unsigned long, param->timeout_ms, INT_MAX);
	p->timeout_is_peers = false;
	p->max_cm_retries = param->max_cm_retries;
	cm_take_policy(p);
	p->tid = cm_new_tid();

	msg = cm_alloc_msg(p, false);
	if (IS_ERR(msg)) {
		ret = PTR_ERR(msg);
		goto unlock;
	}
	req = msg->mad;
	cm_init_mad(&req->hdr, CM_SIDR_REQ_ATTR_ID, p->tid);
	IBA_SET(CM_SIDR_REQ_REQUESTID, req, be32_to_cpu(p->id.local_id));
	IBA_SET(CM_SIDR_REQ_PARTITION_KEY, req, be16_to_cpu(param->path->pkey));
	IBA_SET(CM_SIDR_REQ_SERVICEID, req, be64_to_cpu(param->service_id));
	IBA_SET_MEM(CM_SIDR_REQ_PRIVATE_DATA, req, param->private_data,
		    param->private_data_len);
	trace_icm_send_sidr_req(&p->id);
	ret = cm_post_tracked(p, msg, false, IB_CM_SIDR_REQ_SENT);
	if (!ret)
		cm_set_state(p, IB_CM_SIDR_REQ_SENT, CM_SEND_SIDR_REQ);
unlock:
	spin_unlock_irq(&p->lock);
out:
	cm_av_release(&av);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_sidr_req);

/* Post a SIDR_REP answering @p; p->lock held. */
static int cm_post_sidr_rep_locked(struct cm_id_priv *p,
				   struct ib_cm_sidr_rep_param *param)
{
	struct ib_mad_send_buf *msg;

	lockdep_assert_held(&p->lock);

	msg = cm_alloc_msg(p, false);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	cm_format_sidr_rep(msg->mad, p, param);
	trace_icm_send_sidr_rep(&p->id);
	return cm_post_oneshot(msg);
}

/*
 * SIDR_REQ_RCVD, for the CM's own reasons (@cause): answer if it can, and
 * return to IDLE.  p->lock held.
 */
static void cm_send_sidr_rep_locked(struct cm_id_priv *p,
				    struct ib_cm_sidr_rep_param *param,
				    enum cm_cause cause)
{
	cm_post_sidr_rep_locked(p, param);
	cm_reset_to_idle(p, cause);
}

int ib_send_cm_sidr_rep(struct ib_cm_id *cm_id,
			struct ib_cm_sidr_rep_param *param)
{
	struct cm_id_priv *p = to_priv(cm_id);
	unsigned long flags;
	int ret;

	if (!param ||
	    (param->info && param->info_length > IB_CM_SIDR_REP_INFO_LENGTH) ||
	    !cm_data_fits(__func__, param->private_data, param->private_data_len,
			  IB_CM_SIDR_REP_PRIVATE_DATA_SIZE))
		return -EINVAL;

	spin_lock_irqsave(&p->lock, flags);
	if (p->id.state != IB_CM_SIDR_REQ_RCVD) {
		ret = -EINVAL;
	} else {
		/* Unsent, the id still waits for its answer, as stock's. */
		ret = cm_post_sidr_rep_locked(p, param);
		if (!ret)
			cm_reset_to_idle(p, CM_SEND_SIDR_REP);
	}
	spin_unlock_irqrestore(&p->lock, flags);
	return ret;
}
EXPORT_SYMBOL(ib_send_cm_sidr_rep);

/* ---------------------------------------------------------------------
 * The API: destroying
 */

/*
 * Wind @p down as its state requires (the DESTROY rows of the state
 * table): tell the peer what it needs to know and stop any retried send.
 * @err is the handler's return value when the CM destroys the id on the
 * consumer's behalf: -ENOMEM for a new REQ leaves the REQ unanswered, so
 * that the peer retries it (as the stock CM does); in any later state the
 * peer is told, or it would resend to an id that is gone until its
 * retries ran out.  p->lock held.
 */
static void cm_wind_down_locked(struct cm_id_priv *p, int err)
{
	__be64 guid;

	lockdep_assert_held(&p->lock);

	switch (p->id.state) {
	case IB_CM_LISTEN:
		cm_set_state(p, IB_CM_IDLE, CM_DESTROY);
		break;
	case IB_CM_SIDR_REQ_SENT:
		cm_cancel_msg(p);
		cm_set_state(p, IB_CM_IDLE, CM_DESTROY);
		break;
	case IB_CM_SIDR_REQ_RCVD: {
		struct ib_cm_sidr_rep_param rep = { .status = IB_SIDR_REJECT };

		cm_send_sidr_rep_locked(p, &rep, CM_DESTROY);
		break;
	}
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
		cm_cancel_msg(p);
		guid = p->id.device->node_guid;
		cm_send_rej_locked(p, IB_CM_REJ_TIMEOUT, &guid, sizeof(guid),
				   NULL, 0);
		cm_reset_to_idle(p, CM_DESTROY);
		break;
	case IB_CM_REQ_RCVD:
		if (err != -ENOMEM)
			cm_send_rej_locked(p, IB_CM_REJ_CONSUMER_DEFINED, NULL,
					   0, NULL, 0);
		cm_reset_to_idle(p, CM_DESTROY);
		break;
	case IB_CM_MRA_REQ_SENT:
	case IB_CM_REP_RCVD:
	case IB_CM_MRA_REP_SENT:
		cm_send_rej_locked(p, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				   NULL, 0);
		cm_reset_to_idle(p, CM_DESTROY);
		break;
	case IB_CM_REP_SENT:
	case IB_CM_MRA_REP_RCVD:
		cm_cancel_msg(p);
		cm_send_rej_locked(p, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				   NULL, 0);
		cm_enter_timewait(p, CM_DESTROY);
		break;
	case IB_CM_ESTABLISHED:
		if (p->qp_type == IB_QPT_XRC_TGT) {
			cm_reset_to_idle(p, CM_DESTROY);
			break;
		}
		/*
		 * The DREQ is retried as if the user had sent it: a peer that
		 * lost it would otherwise wait forever for the disconnect.
		 * The id lives on, destroyed and silent, until the DREP, the
		 * peer's DREQ, the last retry or a flush takes it to timewait.
		 */
		cm_send_dreq_locked(p, NULL, 0, CM_DESTROY);
		cm_forget_remote_qp(p);
		break;
	case IB_CM_DREQ_RCVD:
		cm_send_drep_locked(p, NULL, 0, NULL, CM_DESTROY);
		break;
	case IB_CM_DREQ_SENT:
		/* The user's DREQ goes on being retried, as above. */
		cm_limit_sent_dreq(p);
		cm_forget_remote_qp(p);
		break;
	case IB_CM_TIMEWAIT:
		/* The id gives way to a small record (entered later, too). */
		cm_timewait_compact_locked(p);
		break;
	case IB_CM_IDLE:
		break;
	}
	/*
	 * Nothing more is sent along the id's own paths (late duplicates are
	 * answered from the received MAD; a retried DREQ has its own handle),
	 * so let go of the address vectors now: an id may sit in timewait
	 * after this, and its GID attributes must not outlive a device that
	 * is being removed meanwhile.
	 */
	cm_av_release(&p->av);
	cm_av_release(&p->alt_av);
}

/*
 * One user of a listener lets go: true if others share it still, else
 * the listener leaves the table.  p->lock held.
 */
static bool cm_listener_shared(struct cm_id_priv *p)
{
	bool shared;

	lockdep_assert_held(&p->lock);

	spin_lock(&cm.lock);
	shared = --p->listen_sharecount > 0;
	if (!shared)
		cm_unlink_listen(p);
	spin_unlock(&cm.lock);
	return shared;
}

/*
 * Destroy @p for the user (ib_destroy_cm_id(), or a handler's non-zero
 * @err).  Called from the id's own callback, the id is wound down when
 * that returns, exactly as for a non-zero return.  Otherwise, once the
 * id is wound down, this waits for a callback another task is running,
 * and for nothing else: a send the MAD layer never completes holds
 * neither the id nor this call (see cm_cancel_msg()).
 */
static void cm_destroy(struct cm_id_priv *p, int err)
{
	spin_lock_irq(&p->lock);
	if (p->destroyed) {
		spin_unlock_irq(&p->lock);
		WARN_ONCE(1, "ib_cm: cm_id destroyed twice\n");
		return;
	}
	/* A shared listener lives on for its other users, callback or not. */
	if (p->id.state == IB_CM_LISTEN && cm_listener_shared(p)) {
		spin_unlock_irq(&p->lock);
		cm_put_id(p);
		return;
	}
	p->destroyed = true;
	if (p->cb_task == current) {
		p->destroy_deferred = true;
		p->destroy_err = err;
		spin_unlock_irq(&p->lock);
		pr_warn_once("ib_destroy_cm_id() from the id's own handler; it is destroyed when the handler returns (returning non-zero does the same)\n");
		return;
	}
	cm_wind_down_locked(p, err);
	spin_unlock_irq(&p->lock);

	/* No callback starts now; wait for one that is running. */
	wait_event(p->cb_done, !READ_ONCE(p->cb_task));
	cm_put_id(p);
}

void ib_destroy_cm_id(struct ib_cm_id *cm_id)
{
	cm_destroy(to_priv(cm_id), 0);
}
EXPORT_SYMBOL(ib_destroy_cm_id);

/* ---------------------------------------------------------------------
 * The API: QP attributes and notifications
 */

/* Whether a usable alternate path was set up (by a REQ or a LAP). */
static bool cm_has_alt_path(struct cm_id_priv *p)
{
	return p->alt_av.port && rdma_ah_get_dlid(&p->alt_av.ah_attr);
}

int ib_cm_notify(struct ib_cm_id *cm_id, enum ib_event_type event)
{
	struct cm_id_priv *p = to_priv(cm_id);
	unsigned long flags;
	int ret = 0;

	switch (event) {
	case IB_EVENT_COMM_EST:
		/*
		 * Established before this returns, as with the stock CM; the
		 * event follows as an input of the id (this may be called from
		 * a QP event handler).
		 */
		spin_lock_irqsave(&p->lock, flags);
		if (p->id.state == IB_CM_ESTABLISHED) {
			ret = -EISCONN;
		} else if ((p->id.state != IB_CM_REP_SENT &&
			    p->id.state != IB_CM_MRA_REP_RCVD) || p->destroyed) {
			trace_icm_establish_err(&p->id);
			ret = -EINVAL;
		} else {
			cm_cancel_msg(p);
			cm_set_state(p, IB_CM_ESTABLISHED, CM_COMM_EST);
			cm_queue_own_input_locked(p, &p->est_in);
		}
		spin_unlock_irqrestore(&p->lock, flags);
		return ret;
	case IB_EVENT_PATH_MIG:
		/* The QP moved to its alternate path: swap ours too. */
		spin_lock_irqsave(&p->lock, flags);
		if (p->id.state == IB_CM_ESTABLISHED && cm_has_alt_path(p) &&
		    (p->id.lap_state == IB_CM_LAP_UNINIT ||
		     p->id.lap_state == IB_CM_LAP_IDLE)) {
			swap(p->av, p->alt_av);
			cm_set_lap_state(p, IB_CM_LAP_IDLE, CM_PATH_MIG);
		} else {
			ret = -EINVAL;
		}
		spin_unlock_irqrestore(&p->lock, flags);
		return ret;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL(ib_cm_notify);

/* States in which the QP may be moved to INIT, RTR and RTS. */
static bool cm_state_allows_qp(enum ib_cm_state state, bool init)
{
	switch (state) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
		return init;
	case IB_CM_REQ_RCVD:
	case IB_CM_MRA_REQ_SENT:
	case IB_CM_REP_RCVD:
	case IB_CM_MRA_REP_SENT:
	case IB_CM_REP_SENT:
	case IB_CM_MRA_REP_RCVD:
	case IB_CM_ESTABLISHED:
		return true;
	default:
		return false;
	}
}

static void cm_qp_alt_path(struct cm_id_priv *p, struct ib_qp_attr *attr)
{
	attr->alt_port_num = p->alt_av.port ? p->alt_av.port->port_num : 0;
	attr->alt_pkey_index = p->alt_av.pkey_index;
	attr->alt_timeout = p->alt_av.timeout;
	attr->alt_ah_attr = p->alt_av.ah_attr;
}

static void cm_qp_init_attr(struct cm_id_priv *p, struct ib_qp_attr *attr,
			    int *mask)
{
	*mask = IB_QP_STATE | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX |
		IB_QP_PORT;
	attr->qp_access_flags = IB_ACCESS_REMOTE_WRITE;
	if (p->responder_resources) {
		u64 caps = p->id.device->attrs.device_cap_flags;

		attr->qp_access_flags |= IB_ACCESS_REMOTE_READ |
					 IB_ACCESS_REMOTE_ATOMIC;
		if (caps & (IB_DEVICE_FLUSH_GLOBAL | IB_DEVICE_FLUSH_PERSISTENT))
			attr->qp_access_flags |= IB_ACCESS_FLUSH_GLOBAL |
						 IB_ACCESS_FLUSH_PERSISTENT;
	}
	attr->pkey_index = p->av.pkey_index;
	if (p->av.port)
		attr->port_num = p->av.port->port_num;
}

static void cm_qp_rtr_attr(struct cm_id_priv *p, struct ib_qp_attr *attr,
			   int *mask)
{
	*mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
		IB_QP_RQ_PSN;
	attr->ah_attr = p->av.ah_attr;
	if (attr->ah_attr.type == RDMA_AH_ATTR_TYPE_IB &&
	    p->av.dlid_datapath && p->av.dlid_datapath != 0xffff)
		attr->ah_attr.ib.dlid = p->av.dlid_datapath;
	attr->path_mtu = p->path_mtu;
	attr->dest_qp_num = be32_to_cpu(p->remote_qpn);
	attr->rq_psn = be32_to_cpu(p->rq_psn);
	if (p->qp_type == IB_QPT_RC || p->qp_type == IB_QPT_XRC_TGT) {
		*mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
		attr->max_dest_rd_atomic = p->responder_resources;
		attr->min_rnr_timer = 0;
	}
	if (cm_has_alt_path(p)) {
		*mask |= IB_QP_ALT_PATH;
		cm_qp_alt_path(p, attr);
	}
}

static void cm_qp_rts_attr(struct cm_id_priv *p, struct ib_qp_attr *attr,
			   int *mask)
{
	if (p->id.lap_state != IB_CM_LAP_UNINIT) {
		/* After a LAP only the new alternate path is loaded. */
		*mask = IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE;
		cm_qp_alt_path(p, attr);
		attr->path_mig_state = IB_MIG_REARM;
		return;
	}
	*mask = IB_QP_STATE | IB_QP_SQ_PSN;
	attr->sq_psn = be32_to_cpu(p->sq_psn);
	switch (p->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_XRC_INI:
		*mask |= IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			 IB_QP_MAX_QP_RD_ATOMIC;
		attr->retry_cnt = p->retry_count;
		attr->rnr_retry = p->rnr_retry_count;
		attr->max_rd_atomic = p->initiator_depth;
		fallthrough;
	case IB_QPT_XRC_TGT:
		*mask |= IB_QP_TIMEOUT;
		attr->timeout = p->av.timeout;
		break;
	default:
		break;
	}
	if (cm_has_alt_path(p)) {
		*mask |= IB_QP_PATH_MIG_STATE;
		attr->path_mig_state = IB_MIG_REARM;
	}
}

int ib_cm_init_qp_attr(struct ib_cm_id *cm_id, struct ib_qp_attr *qp_attr,
		       int *qp_attr_mask)
{
	struct cm_id_priv *p = to_priv(cm_id);
	enum ib_qp_state want = qp_attr->qp_state;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&p->lock, flags);
	if (!cm_state_allows_qp(p->id.state, want == IB_QPS_INIT))
		ret = -EINVAL;
	else if (want == IB_QPS_INIT)
		cm_qp_init_attr(p, qp_attr, qp_attr_mask);
	else if (want == IB_QPS_RTR)
		cm_qp_rtr_attr(p, qp_attr, qp_attr_mask);
	else if (want == IB_QPS_RTS)
		cm_qp_rts_attr(p, qp_attr, qp_attr_mask);
	else
		ret = -EINVAL;
	spin_unlock_irqrestore(&p->lock, flags);

	if (ret) {
		if (want == IB_QPS_INIT)
			trace_icm_qp_init_err(cm_id);
		else if (want == IB_QPS_RTR)
			trace_icm_qp_rtr_err(cm_id);
		else
			trace_icm_qp_rts_err(cm_id);
	}
	return ret;
}
EXPORT_SYMBOL(ib_cm_init_qp_attr);

/*
 * The texts are the stock CM's, word for word: consumers print them and
 * scripts grep logs for them (the KUnit suites compare them with the
 * stock source).
 */
static const char * const cm_rej_reason_text[] = {
	[IB_CM_REJ_NO_QP] = "no QP",
	[IB_CM_REJ_NO_EEC] = "no EEC",
	[IB_CM_REJ_NO_RESOURCES] = "no resources",
	[IB_CM_REJ_TIMEOUT] = "timeout",
	[IB_CM_REJ_UNSUPPORTED] = "unsupported",
	[IB_CM_REJ_INVALID_COMM_ID] = "invalid comm ID",
	[IB_CM_REJ_INVALID_COMM_INSTANCE] = "invalid comm instance",
	[IB_CM_REJ_INVALID_SERVICE_ID] = "invalid service ID",
	[IB_CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid transport type",
	[IB_CM_REJ_STALE_CONN] = "stale conn",
	[IB_CM_REJ_RDC_NOT_EXIST] = "RDC not exist",
	[IB_CM_REJ_INVALID_GID] = "invalid GID",
	[IB_CM_REJ_INVALID_LID] = "invalid LID",
	[IB_CM_REJ_INVALID_SL] = "invalid SL",
	[IB_CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid traffic class",
	[IB_CM_REJ_INVALID_HOP_LIMIT] = "invalid hop limit",
	[IB_CM_REJ_INVALID_PACKET_RATE] = "invalid packet rate",
	[IB_CM_REJ_INVALID_ALT_GID] = "invalid alt GID",
	[IB_CM_REJ_INVALID_ALT_LID] = "invalid alt LID",
	[IB_CM_REJ_INVALID_ALT_SL] = "invalid alt SL",
	[IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS] = "invalid alt traffic class",
	[IB_CM_REJ_INVALID_ALT_HOP_LIMIT] = "invalid alt hop limit",
	[IB_CM_REJ_INVALID_ALT_PACKET_RATE] = "invalid alt packet rate",
	[IB_CM_REJ_PORT_CM_REDIRECT] = "port CM redirect",
	[IB_CM_REJ_PORT_REDIRECT] = "port redirect",
	[IB_CM_REJ_INVALID_MTU] = "invalid MTU",
	[IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES] = "insufficient resp resources",
	[IB_CM_REJ_CONSUMER_DEFINED] = "consumer defined",
	[IB_CM_REJ_INVALID_RNR_RETRY] = "invalid RNR retry",
	[IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate local comm ID",
	[IB_CM_REJ_INVALID_CLASS_VERSION] = "invalid class version",
	[IB_CM_REJ_INVALID_FLOW_LABEL] = "invalid flow label",
	[IB_CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid alt flow label",
	[IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED] = "vendor option is not supported",
};

const char *__attribute_const__ ibcm_reject_msg(int reason)
{
	if (reason >= 0 && reason < ARRAY_SIZE(cm_rej_reason_text) &&
	    cm_rej_reason_text[reason])
		return cm_rej_reason_text[reason];
	return "unrecognized reason";
}
EXPORT_SYMBOL(ibcm_reject_msg);

/* ---------------------------------------------------------------------
 * Per-port counters in sysfs
 *
 * /sys/class/infiniband/<dev>/ports/<n>/cm_{tx_msgs,tx_retries,rx_msgs,
 * rx_duplicates}/<message> as the stock module has them, plus cm_rx_drops/
 * with one file per reason a received MAD was dropped.
 */

struct cm_counter_attr {
	struct ib_port_attribute attr;
	unsigned short group;	/* enum cm_counter_group */
	unsigned short index;	/* message or drop reason */
};

static const char * const cm_msg_names[CM_ATTR_COUNT] = {
	"req", "mra", "rej", "rep", "rtu", "dreq", "drep", "sidr_req",
	"sidr_rep", "lap", "apr",
};

static const char * const cm_drop_names[CM_DROP_REASONS] = {
	[CM_DROP_LENGTH] = "short",
	[CM_DROP_VERSION] = "version",
	[CM_DROP_METHOD] = "method",
	[CM_DROP_ATTR] = "attribute",
	[CM_DROP_FIELD] = "field",
	[CM_DROP_NOMEM] = "nomem",
	[CM_DROP_UNMATCHED] = "unmatched",
	[CM_DROP_BACKLOG] = "backlog",
};

static const char * const cm_group_names[CM_COUNTER_GROUPS] = {
	[CM_XMIT] = "cm_tx_msgs",
	[CM_XMIT_RETRIES] = "cm_tx_retries",
	[CM_RECV] = "cm_rx_msgs",
	[CM_RECV_DUPLICATES] = "cm_rx_duplicates",
	[CM_RECV_DROPPED] = "cm_rx_drops",
};

#define CM_MAX_GROUP_ATTRS	CM_ATTR_COUNT

static struct cm_counter_attr cm_counter_attrs[CM_COUNTER_GROUPS]
					      [CM_MAX_GROUP_ATTRS];
static struct attribute *cm_counter_attr_list[CM_COUNTER_GROUPS]
					     [CM_MAX_GROUP_ATTRS + 1];
static struct attribute_group cm_counter_group[CM_COUNTER_GROUPS];
/* The counter groups and cm_policy/, as each port shows them. */
static const struct attribute_group *cm_port_groups[CM_COUNTER_GROUPS + 2];

static ssize_t cm_show_counter(struct ib_device *ibdev, u32 port_num,
			       struct ib_port_attribute *attr, char *buf)
{
	struct cm_counter_attr *ca = container_of(attr, struct cm_counter_attr,
						  attr);
	struct cm_device *cm_dev = ib_get_client_data(ibdev, &cm_client);
	struct cm_port *port;

	if (!cm_dev || port_num < 1 || port_num > cm_dev->nports ||
	    !cm_dev->port[port_num - 1])
		return -ENODEV;
	port = cm_dev->port[port_num - 1];
	if (ca->group == CM_RECV_DROPPED)
		return sysfs_emit(buf, "%ld\n",
				  atomic_long_read(&port->drops[ca->index]));
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&port->counters[ca->group][ca->index]));
}

static void cm_init_counter_groups(void)
{
	unsigned int g, i;

	for (g = 0; g < CM_COUNTER_GROUPS; g++) {
		bool drops = g == CM_RECV_DROPPED;
		unsigned int n = drops ? CM_DROP_REASONS : CM_ATTR_COUNT;

		for (i = 0; i < n; i++) {
			struct cm_counter_attr *ca = &cm_counter_attrs[g][i];

			sysfs_attr_init(&ca->attr.attr);
			ca->attr.attr.name = drops ? cm_drop_names[i] :
						     cm_msg_names[i];
			ca->attr.attr.mode = 0444;
			ca->attr.show = cm_show_counter;
			ca->group = g;
			ca->index = i;
			cm_counter_attr_list[g][i] = &ca->attr.attr;
		}
		cm_counter_group[g].name = cm_group_names[g];
		cm_counter_group[g].attrs = cm_counter_attr_list[g];
		cm_port_groups[g] = &cm_counter_group[g];
	}
}

/*
 * /sys/class/infiniband/<dev>/ports/<n>/cm_policy/<knob>: the port's CM
 * policy, one file per entry of cm_policy_knobs.
 */
static struct ib_port_attribute cm_policy_attrs[CM_KNOBS];
static struct attribute *cm_policy_attr_list[CM_KNOBS + 1];
static struct attribute_group cm_policy_group = {
	.name = "cm_policy",
	.attrs = cm_policy_attr_list,
};

static struct cm_port *cm_sysfs_port(struct ib_device *ibdev, u32 port_num)
{
	struct cm_device *cm_dev = ib_get_client_data(ibdev, &cm_client);

	if (!cm_dev || port_num < 1 || port_num > cm_dev->nports)
		return NULL;
	return cm_dev->port[port_num - 1];
}

static const struct cm_policy_knob *
cm_policy_knob_of(struct ib_port_attribute *attr)
{
	return &cm_policy_knobs[attr - cm_policy_attrs];
}

static ssize_t cm_show_policy(struct ib_device *ibdev, u32 port_num,
			      struct ib_port_attribute *attr, char *buf)
{
	struct cm_port *port = cm_sysfs_port(ibdev, port_num);
	struct cm_policy pol;

	if (!port)
		return -ENODEV;
	cm_port_policy(port, &pol);
	return cm_policy_format(&pol, cm_policy_knob_of(attr), buf);
}

static ssize_t cm_store_policy(struct ib_device *ibdev, u32 port_num,
			       struct ib_port_attribute *attr,
			       const char *buf, size_t count)
{
	const struct cm_policy_knob *k = cm_policy_knob_of(attr);
	struct cm_port *port = cm_sysfs_port(ibdev, port_num);
	char what[IB_DEVICE_NAME_MAX + 48];
	u32 v;
	int ret;

	if (!port)
		return -ENODEV;
	snprintf(what, sizeof(what), "%s port %u: cm_policy/%s",
		 dev_name(&ibdev->dev), port_num, k->name);
	ret = cm_policy_parse(k, what, buf, &v);
	if (ret)
		return ret;
	spin_lock_irq(&port->policy_lock);
	*cm_knob_val(&port->policy, k) = v;
	spin_unlock_irq(&port->policy_lock);
	return count;
}

static void cm_init_policy_group(void)
{
	unsigned int i;

	for (i = 0; i < CM_KNOBS; i++) {
		struct ib_port_attribute *pa = &cm_policy_attrs[i];

		sysfs_attr_init(&pa->attr);
		pa->attr.name = cm_policy_knobs[i].name;
		pa->attr.mode = 0644;
		pa->show = cm_show_policy;
		pa->store = cm_store_policy;
		cm_policy_attr_list[i] = &pa->attr;
	}
	cm_port_groups[CM_COUNTER_GROUPS] = &cm_policy_group;
}

/* ---------------------------------------------------------------------
 * Devices come and go
 */

/*
 * Wait for the work that was queued: ids' inputs and answers on cm.wq,
 * REQs' set-up on cm.setup_wq, and the hand-over that follows it.  Work
 * that these queue meanwhile is not waited for (see cm_drain_device()).
 */
static void cm_flush_work(void)
{
	flush_workqueue(cm.wq);
	flush_workqueue(cm.setup_wq);
	flush_workqueue(cm.wq);
}

/* Received MADs of @cm_dev's ports that are still waiting somewhere. */
static int cm_device_backlog(struct cm_device *cm_dev, u32 end)
{
	int n = 0;
	u32 i;

	for (i = 0; i + 1 < end; i++)
		if (cm_dev->port[i])
			n += atomic_read(&cm_dev->port[i]->backlog);
	return n;
}

/*
 * Once nothing is received on @cm_dev's ports below @end any more: wait
 * until every MAD they received is done with.  One MAD's work may queue
 * the next step on the other workqueue (a REQ: listener, set-up,
 * hand-over, the new id's held inputs), so this flushes until none is
 * left.  Each round finishes at least one step of each chain, so it ends;
 * one that does not (a MAD leaked from the count) is reported.
 */
static void cm_drain_device(struct cm_device *cm_dev, u32 end)
{
	unsigned int rounds = 0;

	do {
		cm_flush_work();
	} while (cm_device_backlog(cm_dev, end) && ++rounds < 64);
	WARN_ONCE(rounds >= 64, "ib_cm: received MADs left at device removal\n");
}

/*
 * Once nothing is received on @port any more, wait until its answer queue
 * is empty.  The answer work requeues itself after a batch, which one
 * flush_work() need not wait for.  What it hands to ids, cm_remove_one()
 * flushes after this.
 */
static void cm_drain_answers(struct cm_port *port)
{
	bool ran;

	do {
		ran = flush_work(&port->answer_work);
	} while (ran);
}

/*
 * The agents leave @port under the agent lock (no send is being made on
 * them then) and are unregistered; their outstanding sends are flushed
 * and their handlers done when this returns.
 */
static void cm_ib_drop_agents(struct cm_port *port)
{
	struct cm_device *cm_dev = port->cm_dev;
	struct ib_mad_agent *mad_agent, *send_agent;

	write_lock_irq(&cm_dev->agent_lock);
	mad_agent = port->mad_agent;
	send_agent = port->send_agent;
	WRITE_ONCE(port->mad_agent, NULL);
	port->send_agent = NULL;
	write_unlock_irq(&cm_dev->agent_lock);

	if (send_agent)
		ib_unregister_mad_agent(send_agent);
	if (mad_agent)
		ib_unregister_mad_agent(mad_agent);
}

static struct ib_mad_agent *cm_ib_register(struct cm_port *port,
					   struct ib_mad_reg_req *reg)
{
	return ib_register_mad_agent(port->cm_dev->ib_device, port->port_num,
				     IB_QPT_GSI, reg, 0, cm_send_handler,
				     reg ? cm_recv_handler : NULL, port, 0);
}

static int cm_ib_open_port(struct cm_port *port)
{
	struct ib_port_modify set = { .set_port_cap_mask = IB_PORT_CM_SUP };
	struct ib_mad_reg_req reg = {
		.mgmt_class = IB_MGMT_CLASS_CM,
		.mgmt_class_version = CM_CLASS_VERSION,
	};
	struct cm_device *cm_dev = port->cm_dev;
	struct ib_device *dev = cm_dev->ib_device;
	struct ib_mad_agent *agent, *send_agent;
	int ret;

	ret = ib_port_register_client_groups(dev, port->port_num,
					     cm_port_groups);
	if (ret)
		return ret;

	set_bit(IB_MGMT_METHOD_SEND, reg.method_mask);
	agent = cm_ib_register(port, &reg);
	if (IS_ERR(agent)) {
		ret = PTR_ERR(agent);
		goto err_groups;
	}
	send_agent = cm_ib_register(port, NULL);
	if (IS_ERR(send_agent)) {
		ret = PTR_ERR(send_agent);
		ib_unregister_mad_agent(agent);
		goto err_groups;
	}
	/* Until now the port sent nothing, and answered nothing. */
	write_lock_irq(&cm_dev->agent_lock);
	WRITE_ONCE(port->mad_agent, agent);
	port->send_agent = send_agent;
	write_unlock_irq(&cm_dev->agent_lock);

	ret = ib_modify_port(dev, port->port_num, 0, &set);
	if (ret) {
		cm_ib_drop_agents(port);
		goto err_groups;
	}
	return 0;

err_groups:
	ib_port_unregister_client_groups(dev, port->port_num,
					 cm_port_groups);
	return ret;
}

static void cm_ib_close_port(struct cm_port *port)
{
	struct ib_port_modify clear = { .clr_port_cap_mask = IB_PORT_CM_SUP };
	struct ib_device *dev = port->cm_dev->ib_device;

	ib_modify_port(dev, port->port_num, 0, &clear);
	cm_ib_drop_agents(port);
	ib_port_unregister_client_groups(dev, port->port_num,
					 cm_port_groups);
}

static void cm_remove_port(struct cm_port *port)
{
	port->cm_dev->tp->close_port(port);
	cm_drain_answers(port);
}

/* The lock and queue of a new cm_port (also the KUnit suites'). */
static void cm_port_init(struct cm_port *port)
{
	spin_lock_init(&port->policy_lock);
	port->policy = cm_policy_default;
	spin_lock_init(&port->answer_lock);
	INIT_LIST_HEAD(&port->answers);
	INIT_WORK(&port->answer_work, cm_answer_work);
}

/*
 * The port stays in @cm_dev's array, also when it fails to open: an id
 * made from a MAD it received meanwhile may point at it, and it is freed
 * with the device (whose error path flushes the work it queued).
 */
static int cm_add_port(struct cm_device *cm_dev, u32 port_num)
{
	struct cm_port *port;
	int ret;

	port = kzalloc_obj(*port);
	if (!port)
		return -ENOMEM;
	cm_port_init(port);
	port->cm_dev = cm_dev;
	port->port_num = port_num;
	cm_dev->port[port_num - 1] = port;

	ret = cm_dev->tp->open_port(port);
	if (ret)
		cm_drain_answers(port);
	return ret;
}

/* The locks and lists of a new cm_device (also the KUnit suites'). */
static void cm_device_init(struct cm_device *cm_dev)
{
	kref_init(&cm_dev->kref);
	rwlock_init(&cm_dev->agent_lock);
	init_rwsem(&cm_dev->ah_rwsem);
	spin_lock_init(&cm_dev->ah_lock);
	INIT_LIST_HEAD(&cm_dev->ahs);
}

/*
 * The address handles of @cm_dev must go before the MAD layer frees the
 * PD they are in.  Its users destroy their ids before this (their clients
 * are removed first), and the sends are flushed: what is left belongs to
 * ids nobody destroyed, which can send nothing more.  Their cm_ah stay,
 * without handle, until their last reference goes.
 */
static void cm_forget_ahs(struct cm_device *cm_dev)
{
	struct cm_ah *ah;

	down_write(&cm_dev->ah_rwsem);	/* no handle is being made */
	spin_lock_irq(&cm_dev->ah_lock);
	cm_dev->ahs_gone = true;
	list_for_each_entry(ah, &cm_dev->ahs, list) {
		if (ah->ah)
			ah->port->cm_dev->tp->destroy_ah(ah->ah, 0);
		WRITE_ONCE(ah->ah, NULL);
	}
	spin_unlock_irq(&cm_dev->ah_lock);
	up_write(&cm_dev->ah_rwsem);
}

/*
 * The end of @cm_dev, being removed or failing to be added: its open
 * ports, those numbered below @end, are closed; the work they queued
 * finishes and the address handles go before this returns, and the
 * device's own reference is dropped.
 */
static void cm_close_device(struct cm_device *cm_dev, u32 end)
{
	u32 i;

	for (i = 0; i + 1 < end; i++)
		if (cm_dev->port[i])
			cm_remove_port(cm_dev->port[i]);
	cm_drain_device(cm_dev, end);
	cm_forget_ahs(cm_dev);
	cm_device_put(cm_dev);
}

/*
 * The CM on every CM-capable port of @ib_device, reached through @tp (the
 * KUnit suites give a fake device a transport of their own).  If a port
 * cannot be opened, the device is not added: the ports opened before it
 * are closed again.
 */
static int cm_add_device(struct ib_device *ib_device,
			 const struct cm_transport *tp)
{
	struct cm_device *cm_dev;
	unsigned int count = 0;
	u32 i;
	int ret = 0;

	cm_dev = kzalloc_flex(*cm_dev, port, ib_device->phys_port_cnt);
	if (!cm_dev)
		return -ENOMEM;
	/* Not left to the allocator: compilers without __counted_by skip it. */
	cm_dev->nports = ib_device->phys_port_cnt;
	cm_device_init(cm_dev);
	cm_dev->ib_device = ib_device;
	cm_dev->tp = tp;
	cm_dev->ack_delay = ib_device->attrs.local_ca_ack_delay;
	ib_set_client_data(ib_device, &cm_client, cm_dev);

	rdma_for_each_port(ib_device, i) {
		if (!rdma_cap_ib_cm(ib_device, i))
			continue;
		ret = cm_add_port(cm_dev, i);
		if (ret)
			goto err;
		count++;
	}
	if (!count) {
		ret = -EOPNOTSUPP;
		goto err;
	}

	spin_lock_irq(&cm.lock);
	list_add_tail(&cm_dev->list, &cm.devices);
	spin_unlock_irq(&cm.lock);
	return 0;

err:
	ib_set_client_data(ib_device, &cm_client, NULL);
	/* A failed port cleaned up after itself; those before it are open. */
	cm_close_device(cm_dev, i);
	return ret;
}

static int cm_add_one(struct ib_device *ib_device)
{
	return cm_add_device(ib_device, &cm_ib_transport);
}

static void cm_remove_one(struct ib_device *ib_device, void *client_data)
{
	struct cm_device *cm_dev = client_data;

	if (!cm_dev)
		return;

	spin_lock_irq(&cm.lock);
	cm_dev->going_down = true;
	list_del(&cm_dev->list);
	spin_unlock_irq(&cm.lock);

	cm_close_device(cm_dev, cm_dev->nports + 1);
}

/* ---------------------------------------------------------------------
 * A listing of the ids, in debugfs
 *
 * <debugfs>/ib_cm/ids has one line per id and per timewait record, in
 * the order of cm.local_ids; the design document shows an example.  The
 * walk runs under RCU, one id's lock at a time, and seq_file resumes it
 * by local ID index: no lock is held across the listing.
 */

/* The names the tracepoints give the states: cm_trace.h's lists. */
static const char * const cm_state_names[] = {
	CM_STATES(CM_STATE_NAME, CM_STATE_NAME)
};

static const char * const cm_lap_state_names[] = {
	CM_LAP_STATES(CM_STATE_NAME, CM_STATE_NAME)
};

/* One name per value of each enum: no entry is NULL. */
static_assert(0 CM_STATES(CM_COUNT_ONE, CM_COUNT_ONE) ==
	      IB_CM_SIDR_REQ_RCVD + 1);
static_assert(0 CM_LAP_STATES(CM_COUNT_ONE, CM_COUNT_ONE) ==
	      IB_CM_MRA_LAP_RCVD + 1);
static_assert(ARRAY_SIZE(cm_state_names) == IB_CM_SIDR_REQ_RCVD + 1);
static_assert(ARRAY_SIZE(cm_lap_state_names) == IB_CM_MRA_LAP_RCVD + 1);

/*
 * The end of the line of an id waiting for an answer: the wait and the
 * retries its outstanding message goes by (the policy applied), and in how
 * many ms it is resent next or, after its last send, given up on.
 * p->lock held.
 */
static void cm_show_timing(struct seq_file *m, struct cm_id_priv *p)
{
	long left;
	int done;

	lockdep_assert_held(&p->lock);
	if (!p->msg)
		return;
	done = cm_msg_resends(p);
	left = (long)(p->msg_since - jiffies) +
	       (long)msecs_to_jiffies(p->msg_wait_ms) *
	       (done - p->msg_resends_since + 1);
	seq_printf(m, " timeout_ms=%d max_retries=%u %s=%u",
		   p->msg_wait_ms, p->msg_retries,
		   done < p->msg_retries ? "resend_in_ms" : "gives_up_in_ms",
		   left > 0 ? jiffies_to_msecs(left) : 0);
}

/* One line for @p: what a stuck connection is recognised by. */
static void cm_show_id(struct seq_file *m, struct cm_id_priv *p)
{
	const char *dev = NULL;
	u32 port = 0;
	int retries;

	spin_lock_irq(&p->lock);
	if (p->av.port) {
		dev = dev_name(&p->av.port->cm_dev->ib_device->dev);
		port = p->av.port->port_num;
	} else if (!p->destroyed) {
		/* A destroyed id's device may be gone: only its av tells. */
		dev = dev_name(&p->id.device->dev);
	}
	/* Only an id waiting for an answer has resends to show. */
	retries = p->msg ? cm_msg_resends(p) : 0;
	/* Set only through cm_change_state(), both index their tables. */
	seq_printf(m, "%s %u %s %s 0x%08x 0x%08x 0x%06x 0x%06x 0x%016llx %u %d",
		   dev ?: "-", port, cm_state_names[p->id.state],
		   cm_lap_state_names[p->id.lap_state],
		   be32_to_cpu(p->id.local_id),
		   be32_to_cpu(p->id.remote_id), be32_to_cpu(p->local_qpn),
		   be32_to_cpu(p->remote_qpn), be64_to_cpu(p->id.service_id),
		   jiffies_to_msecs(jiffies - p->state_since), retries);
	seq_puts(m, p->is_listener && p->id.state == IB_CM_LISTEN ?
		 " listener" : "");
	seq_puts(m, p->id.state == IB_CM_TIMEWAIT ? " timewait" : "");
	seq_puts(m, p->destroyed ? " destroyed" : "");
	cm_show_timing(m, p);
	spin_unlock_irq(&p->lock);
	seq_putc(m, '\n');
}

/* One line for a timewait record: its ids and what is left of the wait. */
static void cm_show_record(struct seq_file *m, struct cm_timewait *tw)
{
	long left = (long)(READ_ONCE(tw->timer.expires) - jiffies);

	seq_printf(m, "- 0 TIMEWAIT - 0x%08x 0x%08x - - - - 0 timewait record ends_in_ms=%u\n",
		   be32_to_cpu(tw->local_id),
		   be32_to_cpu(READ_ONCE(tw->peer.key.comm_id)),
		   left > 0 ? jiffies_to_msecs(left) : 0);
}

/*
 * The entry at position *@pos or after: position 0 is the header line,
 * the entry at index i of cm.local_ids is at position i + 1.
 */
static void *cm_ids_find(loff_t *pos)
{
	unsigned long index = *pos - 1;
	void *entry;

	if (*pos - 1 > ULONG_MAX)	/* past the last index */
		return NULL;
	entry = xa_find(&cm.local_ids, &index, ULONG_MAX, XA_PRESENT);

	if (entry)
		*pos = (loff_t)index + 1;
	return entry;
}

static void *cm_ids_start(struct seq_file *m, loff_t *pos)
	__acquires(RCU)
{
	rcu_read_lock();
	return *pos ? cm_ids_find(pos) : SEQ_START_TOKEN;
}

static void *cm_ids_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return cm_ids_find(pos);
}

static void cm_ids_stop(struct seq_file *m, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static int cm_ids_show(struct seq_file *m, void *v)
{
	if (v == SEQ_START_TOKEN)
		seq_puts(m, "device port state lap_state local_id remote_id local_qpn remote_qpn service_id ms_in_state retries flags\n");
	else if (xa_pointer_tag(v) == CM_XA_RECORD)
		cm_show_record(m, xa_untag_pointer(v));
	else
		cm_show_id(m, v);
	return 0;
}

static const struct seq_operations cm_ids_sops = {
	.start = cm_ids_start,
	.next = cm_ids_next,
	.stop = cm_ids_stop,
	.show = cm_ids_show,
};
DEFINE_SEQ_ATTRIBUTE(cm_ids);

static void cm_debugfs_init(void)
{
	cm.debugfs = debugfs_create_dir("ib_cm", NULL);
	debugfs_create_file("ids", 0400, cm.debugfs, NULL, &cm_ids_fops);
}

/* ---------------------------------------------------------------------
 * Module life cycle
 */

static int __init ib_cm_init(void)
{
	int ret;

	/* Local IDs on the wire: a random start, scrambled by a random mask. */
	cm.local_id_mask = get_random_u32();
	cm.local_id_next = get_random_u32();
	/* Never hand out a local ID that is zero on the wire. */
	ret = xa_reserve_irq(&cm.local_ids, cm.local_id_mask, GFP_KERNEL);
	if (ret)
		return ret;
	cm.next_service_id = be64_to_cpu(IB_CM_ASSIGN_SERVICE_ID);
	cm_init_transitions();
	cm_init_counter_groups();
	cm_init_policy_group();

	ret = rhashtable_init(&cm.listeners, &cm_listen_params);
	if (ret)
		goto err_listeners;
	ret = rhashtable_init(&cm.remote_ids, &cm_remote_id_params);
	if (ret)
		goto err_remote_ids;
	ret = rhltable_init(&cm.remote_qps, &cm_remote_qp_params);
	if (ret)
		goto err_remote_qps;
	ret = rhashtable_init(&cm.waiting_reqs, &cm_waiting_params);
	if (ret)
		goto err_waiting;

	/* Caches of their own: exact sizes, and visible in slabinfo. */
	cm.id_cache = kmem_cache_create("ib_cm_id", sizeof(struct cm_id_priv),
					0, 0, NULL);
	cm.work_cache = kmem_cache_create("ib_cm_work", sizeof(struct cm_work),
					  0, 0, NULL);
	cm.req_work_cache = kmem_cache_create("ib_cm_req_work",
					      sizeof(struct cm_req_work),
					      0, 0, NULL);
	cm.tw_cache = kmem_cache_create("ib_cm_timewait",
					sizeof(struct cm_timewait), 0, 0, NULL);
	if (!cm.id_cache || !cm.work_cache || !cm.req_work_cache ||
	    !cm.tw_cache) {
		ret = -ENOMEM;
		goto err_cache;
	}

	/*
	 * Per-CPU workers, as many as there are ids with inputs: one whose
	 * handler sleeps holds up only itself.  The CM carries storage
	 * connections (NVMe-oF, iSER, SRP), hence the rescuer.
	 */
	cm.wq = alloc_workqueue("ib_cm", WQ_MEM_RECLAIM | WQ_PERCPU, 0);
	if (!cm.wq) {
		ret = -ENOMEM;
		goto err_cache;
	}
	/*
	 * New passive ids are set up here, CM_SETUP_MAX at a time: each may
	 * sleep for a second, and on cm.wq enough of them would hold up
	 * every other id's work.
	 */
	cm.setup_wq = alloc_workqueue("ib_cm_setup",
				      WQ_MEM_RECLAIM | WQ_UNBOUND,
				      CM_SETUP_MAX);
	if (!cm.setup_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	ret = ib_register_client(&cm_client);
	if (ret)
		goto err_setup_wq;
	cm_debugfs_init();
	return 0;

err_setup_wq:
	destroy_workqueue(cm.setup_wq);
err_wq:
	destroy_workqueue(cm.wq);
err_cache:
	kmem_cache_destroy(cm.tw_cache);
	kmem_cache_destroy(cm.req_work_cache);
	kmem_cache_destroy(cm.work_cache);
	kmem_cache_destroy(cm.id_cache);
	rhashtable_destroy(&cm.waiting_reqs);
err_waiting:
	rhltable_destroy(&cm.remote_qps);
err_remote_qps:
	rhashtable_destroy(&cm.remote_ids);
err_remote_ids:
	rhashtable_destroy(&cm.listeners);
err_listeners:
	xa_destroy(&cm.local_ids);
	return ret;
}

static void __exit ib_cm_cleanup(void)
{
	struct cm_id_priv *p;
	unsigned long index;

	debugfs_remove_recursive(cm.debugfs);
	ib_unregister_client(&cm_client);

	/*
	 * Only ids and records in timewait can be left: end their timewaits
	 * now (no device is left, so none enters timewait meanwhile).  An
	 * entry stays valid for an RCU grace period after it went, so each
	 * is looked up and referenced inside one read-side section.
	 */
	cm_end_timewait_records();
	/* A record timer already past its erase finishes in a grace period. */
	synchronize_rcu();
	rcu_read_lock();
	xa_for_each(&cm.local_ids, index, p) {
		if (xa_pointer_tag(p) == CM_XA_RECORD ||
		    !refcount_inc_not_zero(&p->refcount))
			continue;
		rcu_read_unlock();
		if (cancel_delayed_work_sync(&p->tw_work))
			cm_put_id(p);
		cm_put_id(p);
		rcu_read_lock();
	}
	rcu_read_unlock();
	destroy_workqueue(cm.setup_wq);
	destroy_workqueue(cm.wq);
	rcu_barrier();
	rhashtable_destroy(&cm.waiting_reqs);
	rhltable_destroy(&cm.remote_qps);
	rhashtable_destroy(&cm.remote_ids);
	rhashtable_destroy(&cm.listeners);
	xa_destroy(&cm.local_ids);
	kmem_cache_destroy(cm.tw_cache);
	kmem_cache_destroy(cm.req_work_cache);
	kmem_cache_destroy(cm.work_cache);
	kmem_cache_destroy(cm.id_cache);
}

module_init(ib_cm_init);
module_exit(ib_cm_cleanup);

/*
 * The KUnit suites (tools/testing/kunit/cm_kunit_*.c; next to this file in
 * the kernel tree) are compiled into this file when
 * CONFIG_INFINIBAND_CM_KUNIT_TEST is set, so that they reach the static
 * functions they test; the code above is the same with or without them,
 * but for the steps a suite may stand in for (CM_KUNIT_STUB()).
 * Each harness serves the suites listed after it, up to the next one.
 * cm_trace.h left CREATE_TRACE_POINTS defined, which would define again
 * the tracepoints of the trace headers the suites include.
 */
#if IS_ENABLED(CONFIG_INFINIBAND_CM_KUNIT_TEST)
#undef CREATE_TRACE_POINTS
#include "cm_kunit_wire.c"	/* ib_cm_wire: the wire codec */
#include "cm_kunit_arith.c"	/* ib_cm_arithmetic: timeouts, reject texts */
#include "cm_kunit_ids.c"	/* harness: ids without a transport */
#include "cm_kunit_listen.c"	/* ib_cm_listen: the listen table */
#include "cm_kunit_sm.c"	/* ib_cm_state_machine: the transition tables */
#include "cm_kunit_misuse.c"	/* ib_cm_api_misuse */
#include "cm_kunit_qp.c"	/* ib_cm_qp_attr: INIT, RTR and RTS */
#include "cm_kunit_hostile.c"	/* ib_cm_hostile: MADs to drop or classify */
#include "cm_kunit_fake.c"	/* harness: the fake MAD transport */
#include "cm_kunit_active.c"	/* ib_cm_active: the active side */
#include "cm_kunit_passive.c"	/* ib_cm_passive: the passive side */
#include "cm_kunit_sidr_lap.c"	/* ib_cm_sidr_lap: SIDR; LAP and APR */
#include "cm_kunit_dup.c"	/* ib_cm_duplicates: duplicates, stale */
#include "cm_kunit_contract.c"	/* ib_cm_contract: the handler contract */
#include "cm_kunit_states.c"	/* ib_cm_states: destroy, time out */
#include "cm_kunit_floods.c"	/* ib_cm_floods: bounded backlogs */
#include "cm_kunit_order.c"	/* ib_cm_ordering: arrival order */
#include "cm_kunit_faults.c"	/* ib_cm_alloc_faults: allocations fail */
#include "cm_kunit_policy.c"	/* ib_cm_policy: the per-port CM policy */
#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * The fake MAD transport: the harness of the suites from ib_cm_active on
 *
 * The fake stands where the MAD layer and ib_core stand: it is the struct
 * cm_transport of a fake device, so the rest of the module runs as it does
 * for a real one.  Sends are recorded instead of posted, and stay
 * outstanding until a test completes them (successfully, cancelled, or
 * with a response timeout); received MADs are handed to cm_recv_handler()
 * as the MAD layer would; cm.wq is flushed after every step, so each test
 * runs the protocol one deterministic step at a time.  Timewait, which
 * lasts half a minute with the paths used here, is ended on demand.
 *
 * The port belongs to that fake device: a zeroed struct ib_device with
 * one InfiniBand port, a cm_device on cm.devices (for the length of a
 * test) whose transport is the fake, and MAD agents that only carry the
 * port as their context.
 *
 * Not a suite: each suite after it is an init/exit pair of fk_init() and
 * fk_exit() and cases that drive the fake with these helpers.
 */

#include <kunit/test.h>
#include <linux/delay.h>

#define FK_SENT_MAX	48
#define FK_EVENTS_MAX	32
#define FK_WINDOWS	64	/* ids whose last change is watched */
#define FK_KEEP		16	/* bytes of private data and ARI kept */

#define FK_PEER_ID	0x5eed0001U	/* the peer's comm ID */
#define FK_PEER_QPN	0x000123U
#define FK_PEER_GUID	0x0002c90300abcdefULL
#define FK_OUR_GUID	0x0002c90300001234ULL
#define FK_OUR_QPN	0x000456U
#define FK_SID		0x10000000000abcdeULL
#define FK_PEER_LID	0x0011
/*
 * Packet lifetime of the paths: timewait lasts 2^(FK_LIFE + 1) * 4.096 us,
 * about 34 s, so it never ends by itself while a test runs (even under
 * KASAN in TCG); fk_end_timewaits() ends it.
 */
#define FK_LIFE		22

struct fk_sent {
	__be16 attr;		/* attribute ID */
	bool tracked;		/* the id's outstanding (retried) message */
	bool send_only;		/* posted on the send-only agent */
	bool resent;		/* an answer resent for a duplicate */
	bool backoff;		/* a resend of the backoff schedule */
	union cm_kunit_msg mad;
};

struct fk_event {
	struct ib_cm_id *id;
	void *context;
	enum ib_cm_event_type type;
	struct ib_cm_id *listen_id;	/* REQ and SIDR_REQ */
	int reason;			/* REJ */
	u8 ari_length;
	u8 ari[FK_KEEP];
	u8 pdata[FK_KEEP];
	int status;			/* send_status, SIDR_REP status */
	u32 qpn;			/* REQ: remote QPN; SIDR_REP: QPN */
	int qp_type;			/* REQ */
	bool alt_path;			/* REQ: an alternate path came */
	u32 path_slid;			/* REQ: the primary path's LIDs */
	u32 path_dlid;
	u8 path_sl;			/* REQ: and its SL */
	int state;			/* the id's state during the call */
};

struct fk_msg {
	struct ib_mad_send_buf buf;
	struct list_head node;
	bool cancelled;
	u32 timeout_ms;
	int retries;		/* the retries it was posted with */
	union cm_kunit_msg mad;
};

/*
 * What a row of the transition tables was seen to do, over one suite on
 * the fake: the messages the CM posted for the id and the events its
 * handler heard.  The CM posts a message and then changes the state (an
 * API call: cm_post_tracked(), then cm_set_state()), or changes it and
 * then answers (a MAD received), so a message is the doing of the id's
 * next change if one follows before the test's next input (a MAD
 * received, a send completed), else of its last change.  An event is the
 * doing of the last change.  Each suite prints its rows at its end
 * (fk_suite_exit()), and tools/testing/man/check_transitions.py --seen
 * compares them with the "sent" and "event" columns of the design
 * document's tables.
 */
struct fk_seen {
	unsigned int hits;
	u32 sent;		/* bit cm_attr_index() of each message */
	u32 events;		/* bit enum ib_cm_event_type of each */
};

static struct fk_seen fk_seen_state[ARRAY_SIZE(cm_state_table)];
static struct fk_seen fk_seen_lap[ARRAY_SIZE(cm_lap_table)];

/* An id watched since the test's last input. */
struct fk_window {
	bool used;
	__be32 local_id;
	__be32 remote_id;	/* what our SIDR_REP names it by */
	struct fk_seen *row;	/* its last change, or NULL */
	u32 pending;		/* messages posted since */
};

struct fk_rx {
	struct ib_mad_recv_wc wc;
	struct ib_wc ib_wc;
	struct ib_grh grh;
	struct ib_mad mad;
};

struct fk {
	struct kunit *test;
	struct ib_device *dev;
	struct ib_port_data port_data[2];
	struct cm_device *cm_dev;
	struct cm_port *port;
	struct ib_mad_agent agent;
	struct ib_mad_agent send_agent;
	struct ib_qp qp;		/* QP1 of the agents, for its PD */
	struct ib_pd pd;

	spinlock_t lock;		/* posted, sent, events */
	struct list_head posted;	/* not yet completed */
	unsigned int nsent;
	struct fk_sent sent[FK_SENT_MAX];
	unsigned int nevents;
	struct fk_event events[FK_EVENTS_MAX];
	unsigned int rx_freed;
	struct fk_window windows[FK_WINDOWS];

	/* Failures to inject. */
	int post_ret;			/* fk_post() returns it */
	bool create_fails;		/* fk_create_msg() has no memory */
	atomic_t ahs;			/* address handles that exist */
	atomic_t ahs_made;		/* address handles ever made */
	int path_ret;			/* fk_ah_from_path() returns it */
	int wc_ret;			/* fk_ah_from_wc() returns it */
	bool hold_answers;		/* fk_ah_from_wc() waits for release
					 * in cm_answer_work()
					 */
	struct task_struct *receiving;	/* in cm_recv_handler() */
	u16 rx_slid;			/* their source LID (0: FK_PEER_LID) */
	u16 hold_slid;			/* fk_ah_from_wc() waits for release
					 * for a MAD from this LID
					 */
	u8 rx_sl;			/* the SL received MADs came on */
	u8 rx_path_bits;		/* their DLID path bits */
	unsigned int wc_in_recv;	/* fk_ah_from_wc() calls in it */
	atomic_t blocking;		/* allocations in it that may sleep */

	/* How the handler behaves. */
	int ret_for[IB_CM_SIDR_REP_RECEIVED + 1];
	bool swap_on_req;
	/* Called from the handler for every event; its test's own code. */
	void (*hook)(struct fk *fk, struct ib_cm_id *id,
		     const struct ib_cm_event *e);
	unsigned int hook_calls;
	int seen;			/* what a hook saw */
	struct completion release;	/* a hook may wait for the test */
	atomic_t held;			/* hooks waiting */

	/* Ids the test owns and destroys at the end, unless already gone. */
	struct ib_cm_id *owned[FK_EVENTS_MAX];
	unsigned int nowned;
};

static struct fk *fk_cur;

/* ---- what each change of state was seen to do ---- */

/* The window of comm ID @key (@remote: the peer's), or NULL. */
static struct fk_window *fk_window(struct fk *fk, __be32 key, bool remote)
{
	struct fk_window *w;

	lockdep_assert_held(&fk->lock);
	for (w = fk->windows; w < fk->windows + FK_WINDOWS; w++)
		if (w->used && (remote ? w->remote_id : w->local_id) == key)
			return w;
	return NULL;
}

/* The window of @key, opened if there is none (NULL: all are in use). */
static struct fk_window *fk_window_open(struct fk *fk, __be32 key,
					bool remote)
{
	struct fk_window *w = fk_window(fk, key, remote);

	if (w)
		return w;
	for (w = fk->windows; w < fk->windows + FK_WINDOWS; w++) {
		if (w->used)
			continue;
		*w = (struct fk_window){ .used = true };
		if (remote)
			w->remote_id = key;
		else
			w->local_id = key;
		return w;
	}
	return NULL;
}

/* A message we post: pending until the change it belongs to is known. */
static void fk_saw_post(struct fk *fk, const union cm_kunit_msg *mad)
{
	__be16 attr = mad->mad.mad_hdr.attr_id;
	struct fk_window *w;

	/*
	 * Each CM message begins with its sender's comm ID, or with the
	 * SIDR request ID: ours in a SIDR_REQ, the requester's in our
	 * SIDR_REP.
	 */
	w = fk_window_open(fk, *(const __be32 *)mad->mad.data,
			   attr == CM_SIDR_REP_ATTR_ID);
	if (w)
		w->pending |= BIT(cm_attr_index(attr));
}

/* icm_state's probe: what @id posted since its last change is this one's. */
static void fk_saw_change(void *data, const struct ib_cm_id *id, bool lap,
			  unsigned int from, unsigned int to,
			  enum cm_cause cause)
{
	struct fk *fk = READ_ONCE(fk_cur);
	struct fk_seen *row = NULL;
	struct fk_window *w;
	unsigned long flags;
	unsigned int i;

	if (!fk)
		return;
	for (i = 0; i < cm_kunit_rows(lap); i++) {
		const struct cm_transition *t = cm_kunit_row(lap, i);

		if (t->from == from && t->to == to && t->cause == cause) {
			row = lap ? &fk_seen_lap[i] : &fk_seen_state[i];
			break;
		}
	}
	spin_lock_irqsave(&fk->lock, flags);
	w = fk_window(fk, id->local_id, false);
	if (!w && id->remote_id)
		w = fk_window(fk, id->remote_id, true);
	if (!w)
		w = fk_window_open(fk, id->local_id, false);
	/* Not a row: cm_change_state() warned, and nothing is noted. */
	if (w) {
		w->local_id = id->local_id;
		w->remote_id = id->remote_id;
		w->row = row;
		if (row)
			row->sent |= w->pending;
		w->pending = 0;
	}
	if (row)
		row->hits++;
	spin_unlock_irqrestore(&fk->lock, flags);
}

/* An input of the test: what follows is the input's doing. */
static void fk_close_windows(struct fk *fk)
{
	struct fk_window *w;
	unsigned long flags;

	spin_lock_irqsave(&fk->lock, flags);
	for (w = fk->windows; w < fk->windows + FK_WINDOWS; w++) {
		if (w->used && w->row)
			w->row->sent |= w->pending;
		w->used = false;
	}
	spin_unlock_irqrestore(&fk->lock, flags);
}

/* @mask's messages ("rej,dreq") or events ("3,11") into @buf. */
static void fk_seen_list(char *buf, size_t size, u32 mask, bool msgs)
{
	unsigned int bit, n = 0;

	buf[0] = '\0';
	for (bit = 0; bit < 32; bit++) {
		if (!(mask & BIT(bit)))
			continue;
		if (msgs && bit < CM_ATTR_COUNT)
			n += scnprintf(buf + n, size - n, "%s%s", n ? "," : "",
				       cm_msg_names[bit]);
		else
			n += scnprintf(buf + n, size - n, "%s%u", n ? "," : "",
				       bit);
	}
	if (!n)
		strscpy(buf, "-", size);
}

/*
 * One line per row the suite took, in the format check_transitions.py
 * reads: "ib_cm_seen: SUITE state|lap ROW hits N sent MSG,... events
 * EVENT,...", ROW counting from 0 in cm_state_table[] or cm_lap_table[],
 * MSG a name of cm_msg_names[], EVENT a value of enum ib_cm_event_type,
 * "-" for none.
 */
static void fk_seen_print(struct kunit_suite *suite, const char *kind,
			  const struct fk_seen *rows, unsigned int n)
{
	char sent[96], events[96];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!rows[i].hits)
			continue;
		fk_seen_list(sent, sizeof(sent), rows[i].sent, true);
		fk_seen_list(events, sizeof(events), rows[i].events, false);
		kunit_log(KERN_INFO, suite,
			  "ib_cm_seen: %s %s %u hits %u sent %s events %s\n",
			  suite->name, kind, i, rows[i].hits, sent, events);
	}
}

/* .suite_init of each suite on the fake: watch its changes. */
static int fk_suite_init(struct kunit_suite *suite)
{
	memset(fk_seen_state, 0, sizeof(fk_seen_state));
	memset(fk_seen_lap, 0, sizeof(fk_seen_lap));
	return register_trace_icm_state(fk_saw_change, NULL);
}

/* .suite_exit: stop watching, and say what the rows it took did. */
static void fk_suite_exit(struct kunit_suite *suite)
{
	if (unregister_trace_icm_state(fk_saw_change, NULL))
		return;
	tracepoint_synchronize_unregister();
	fk_seen_print(suite, "state", fk_seen_state,
		      ARRAY_SIZE(fk_seen_state));
	fk_seen_print(suite, "lap", fk_seen_lap, ARRAY_SIZE(fk_seen_lap));
}

/* ---- the transport ---- */

static struct cm_port *fk_port_of_path(struct cm_device *cm_dev,
				       struct sa_path_rec *path,
				       const struct ib_gid_attr *sgid_attr)
{
	return cm_dev == fk_cur->cm_dev ? fk_cur->port : NULL;
}

static int fk_ah_from_path(struct cm_port *port, struct sa_path_rec *path,
			   const struct ib_gid_attr *sgid_attr,
			   struct rdma_ah_attr *ah_attr, u16 *pkey_index)
{
	if (fk_cur->path_ret)
		return fk_cur->path_ret;
	ah_attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(ah_attr, be16_to_cpu(path->ib.dlid));
	rdma_ah_set_port_num(ah_attr, port->port_num);
	*pkey_index = 0;
	return 0;
}

static int fk_ah_from_wc(struct cm_port *port, struct ib_mad_recv_wc *recv_wc,
			 struct rdma_ah_attr *ah_attr)
{
	struct work_struct *w = current_work();

	/* On RoCE this may sleep for a second: never on the receive path. */
	if (fk_cur->receiving == current)
		fk_cur->wc_in_recv++;
	if ((fk_cur->hold_answers && w && w->func == cm_answer_work) ||
	    (fk_cur->hold_slid && recv_wc->wc->slid == fk_cur->hold_slid)) {
		atomic_inc(&fk_cur->held);
		wait_for_completion(&fk_cur->release);
	}
	if (fk_cur->wc_ret)
		return fk_cur->wc_ret;
	ah_attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(ah_attr, recv_wc->wc->slid);
	rdma_ah_set_port_num(ah_attr, port->port_num);
	return 0;
}

/* The port's GID: the link-local prefix and our GUID. */
static int fk_port_gid(struct cm_port *port, union ib_gid *gid)
{
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
	gid->global.interface_id = cpu_to_be64(FK_OUR_GUID);
	return 0;
}

static u16 fk_pkey(struct cm_port *port, u16 pkey_index)
{
	return 0xffff;
}

/*
 * Address handles are tokens, counted; they must be made where sleeping
 * is allowed, never under a spinlock.  Their counts are kept under
 * fk_ah_lock, taken with softirqs enabled as rxe's object pool takes its
 * xarray's lock: lockdep then reports an id's lock that is taken in
 * softirq context (a timer) and held while an address handle goes.
 */
static DEFINE_SPINLOCK(fk_ah_lock);

static struct ib_ah *fk_create_ah(struct ib_pd *pd,
				  struct rdma_ah_attr *ah_attr, u32 flags)
{
	struct ib_ah *ah;

	KUNIT_EXPECT_FALSE_MSG(fk_cur->test, irqs_disabled(),
			       "address handle made with interrupts off");
	might_sleep();
	if (fk_cur->create_fails)
		return ERR_PTR(-ENOMEM);
	ah = kzalloc_obj(*ah, GFP_KERNEL);
	if (!ah)
		return ERR_PTR(-ENOMEM);
	spin_lock(&fk_ah_lock);
	atomic_inc(&fk_cur->ahs);
	atomic_inc(&fk_cur->ahs_made);
	spin_unlock(&fk_ah_lock);
	return ah;
}

static void fk_destroy_ah(struct ib_ah *ah, u32 flags)
{
	spin_lock(&fk_ah_lock);
	atomic_dec(&fk_cur->ahs);
	spin_unlock(&fk_ah_lock);
	kfree(ah);
}

static struct ib_mad_send_buf *fk_create_msg(struct ib_mad_agent *agent,
					     u32 remote_qpn, u16 pkey_index)
{
	struct fk_msg *m;

	if (fk_cur->create_fails)
		return ERR_PTR(-ENOMEM);
	m = kzalloc_obj(*m, GFP_ATOMIC);
	if (!m)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&m->node);
	m->buf.mad = &m->mad;
	m->buf.mad_agent = agent;
	m->buf.hdr_len = IB_MGMT_MAD_HDR;
	m->buf.data_len = IB_MGMT_MAD_DATA;
	return &m->buf;
}

static void fk_free_msg(struct ib_mad_send_buf *msg)
{
	kfree(container_of(msg, struct fk_msg, buf));
}

static int fk_post(struct ib_mad_send_buf *msg,
		   struct ib_mad_send_buf **bad_msg)
{
	struct fk_msg *m = container_of(msg, struct fk_msg, buf);
	struct fk *fk = fk_cur;
	unsigned long flags;
	struct fk_sent *s;

	if (fk->post_ret)
		return fk->post_ret;
	spin_lock_irqsave(&fk->lock, flags);
	if (fk->nsent < FK_SENT_MAX) {
		s = &fk->sent[fk->nsent];
		s->attr = m->mad.mad.mad_hdr.attr_id;
		s->tracked = !!msg->context[0];
		s->resent = cm_msg_resent(msg);
		s->backoff = cm_msg_backoff(msg);
		s->send_only = msg->mad_agent == &fk->send_agent;
		s->mad = m->mad;
	}
	fk->nsent++;
	/* Nor an answer resent for a duplicate nor a resend is a change's doing. */
	if (!cm_msg_resent(msg) && !cm_msg_backoff(msg))
		fk_saw_post(fk, &m->mad);
	m->timeout_ms = msg->timeout_ms;
	m->retries = msg->retries;
	list_add_tail(&m->node, &fk->posted);
	spin_unlock_irqrestore(&fk->lock, flags);
	return 0;
}

static void fk_cancel(struct ib_mad_send_buf *msg)
{
	struct fk_msg *m = container_of(msg, struct fk_msg, buf);
	unsigned long flags;

	spin_lock_irqsave(&fk_cur->lock, flags);
	m->cancelled = true;
	spin_unlock_irqrestore(&fk_cur->lock, flags);
}

static int fk_modify(struct ib_mad_send_buf *msg, u32 timeout_ms)
{
	struct fk_msg *m = container_of(msg, struct fk_msg, buf);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&fk_cur->lock, flags);
	if (m->cancelled)
		ret = -EINVAL;
	else
		m->timeout_ms = timeout_ms;
	spin_unlock_irqrestore(&fk_cur->lock, flags);
	return ret;
}

static void fk_free_recv(struct ib_mad_recv_wc *recv_wc)
{
	fk_cur->rx_freed++;
	kfree(container_of(recv_wc, struct fk_rx, wc));
}

static const struct cm_transport fk_transport = {
	.port_of_path = fk_port_of_path,
	.ah_from_path = fk_ah_from_path,
	.ah_from_wc = fk_ah_from_wc,
	.port_gid = fk_port_gid,
	.pkey = fk_pkey,
	.create_ah = fk_create_ah,
	.destroy_ah = fk_destroy_ah,
	.create_msg = fk_create_msg,
	.free_msg = fk_free_msg,
	.post = fk_post,
	.cancel = fk_cancel,
	.modify = fk_modify,
	.free_recv = fk_free_recv,
};

/* ---- driving it ---- */

static void fk_flush(void)
{
	cm_flush_work();
	/*
	 * The answer work requeues itself after a batch, which a flush does
	 * not wait for; what it hands to ids, the second flush does.
	 */
	if (fk_cur) {
		cm_drain_answers(fk_cur->port);
		cm_flush_work();
	}
}

/* Complete one posted message with @status, as the MAD layer would. */
static void fk_complete(struct fk *fk, struct fk_msg *m,
			enum ib_wc_status status)
{
	struct ib_mad_send_wc wc = { .send_buf = &m->buf, .status = status };

	fk_close_windows(fk);
	spin_lock_irq(&fk->lock);
	list_del_init(&m->node);
	spin_unlock_irq(&fk->lock);
	cm_send_handler(m->buf.mad_agent, &wc);
}

/*
 * Let the MAD layer catch up: every message that is not retried any more
 * (answers, REJs, DREPs, and cancelled ones) completes.
 */
static void fk_settle(struct fk *fk)
{
	struct fk_msg *m;

	for (;;) {
		bool found = false;

		spin_lock_irq(&fk->lock);
		list_for_each_entry(m, &fk->posted, node) {
			if (m->cancelled || !m->buf.context[0]) {
				found = true;
				break;
			}
		}
		spin_unlock_irq(&fk->lock);
		if (!found)
			break;
		fk_complete(fk, m, m->cancelled ? IB_WC_WR_FLUSH_ERR :
				   IB_WC_SUCCESS);
	}
	fk_flush();
}

/* The outstanding retried message, if any. */
static struct fk_msg *fk_tracked(struct fk *fk)
{
	struct fk_msg *m, *found = NULL;

	spin_lock_irq(&fk->lock);
	list_for_each_entry(m, &fk->posted, node)
		if (!m->cancelled && m->buf.context[0])
			found = m;
	spin_unlock_irq(&fk->lock);
	return found;
}

/* The outstanding message runs out of retries. */
static bool fk_time_out(struct fk *fk)
{
	struct fk_msg *m = fk_tracked(fk);

	if (!m)
		return false;
	/* The MAD layer tried as often as the buffer asked. */
	m->buf.retries = m->retries;
	fk_complete(fk, m, IB_WC_RESP_TIMEOUT_ERR);
	fk_settle(fk);
	return true;
}

/* A receive buffer of the fake MAD layer; it is not one of the CM's. */
static struct fk_rx *fk_rx_alloc(void)
{
	struct fk_rx *rx;
#ifdef CONFIG_FAULT_INJECTION
	unsigned int may_fail = current->make_it_fail;

	current->make_it_fail = 0;
	rx = kzalloc_obj(*rx);
	current->make_it_fail = may_fail;
#else
	rx = kzalloc_obj(*rx);
#endif
	return rx;
}

/*
 * Hand @mad to the CM as the MAD layer would, as received from the peer
 * (LID FK_PEER_LID) with a GRH naming @sgid if that is not NULL, and go
 * on at once.
 */
static void fk_inject(struct fk *fk, const union cm_kunit_msg *mad,
		      const union ib_gid *sgid)
{
	struct fk_rx *rx = fk_rx_alloc();

	KUNIT_ASSERT_NOT_NULL(fk->test, rx);
	rx->wc.recv_buf.grh = &rx->grh;
	if (sgid) {
		rx->grh.sgid = *sgid;
		rx->ib_wc.wc_flags = IB_WC_GRH;
	}
	memcpy(&rx->mad, mad, sizeof(*mad));
	rx->wc.wc = &rx->ib_wc;
	rx->wc.recv_buf.mad = &rx->mad;
	rx->wc.mad_len = sizeof(rx->mad);
	rx->ib_wc.slid = fk->rx_slid ?: FK_PEER_LID;
	rx->ib_wc.sl = fk->rx_sl;
	rx->ib_wc.dlid_path_bits = fk->rx_path_bits;
	rx->ib_wc.src_qp = 1;
	rx->ib_wc.pkey_index = 0;
	rx->ib_wc.port_num = 1;
	fk_close_windows(fk);
	fk->receiving = current;
	cm_recv_handler(&fk->agent, NULL, &rx->wc);
	fk->receiving = NULL;
}

static void fk_receive_grh(struct fk *fk, const union cm_kunit_msg *mad,
			   const union ib_gid *sgid)
{
	fk_inject(fk, mad, sgid);
	fk_flush();
	fk_settle(fk);
}

static void fk_receive(struct fk *fk, const union cm_kunit_msg *mad)
{
	fk_receive_grh(fk, mad, NULL);
}

/* End every timewait on the fake device (and every record) now. */
static void fk_end_timewaits(struct fk *fk)
{
	struct cm_id_priv *p;
	unsigned long index;

	cm_end_timewait_records();
	rcu_read_lock();
	xa_for_each(&cm.local_ids, index, p) {
		if (xa_pointer_tag(p) == CM_XA_RECORD ||
		    p->id.device != fk->dev ||
		    READ_ONCE(p->id.state) != IB_CM_TIMEWAIT)
			continue;
		/* As if it were due now: the CM's own end, on cm.wq. */
		spin_lock_irq(&p->lock);
		if (cancel_delayed_work(&p->tw_work)) {
			p->tw_due = jiffies;
			queue_delayed_work(cm.wq, &p->tw_work, 0);
		}
		spin_unlock_irq(&p->lock);
	}
	rcu_read_unlock();
	fk_flush();
	fk_settle(fk);
}

static unsigned int fk_ids_on_device(struct fk *fk)
{
	struct cm_id_priv *p;
	unsigned long index;
	unsigned int n = 0;

	rcu_read_lock();
	xa_for_each(&cm.local_ids, index, p)
		if (xa_pointer_tag(p) != CM_XA_RECORD && p->id.device == fk->dev)
			n++;
	rcu_read_unlock();
	return n;
}

static long fk_count(struct fk *fk, unsigned int group, __be16 attr)
{
	return atomic_long_read(&fk->port->counters[group][cm_attr_index(attr)]);
}

static long fk_drops(struct fk *fk, unsigned int why)
{
	return atomic_long_read(&fk->port->drops[why]);
}

/* ---- the handler ---- */

static int fk_handler2(struct ib_cm_id *id, const struct ib_cm_event *e);

static void fk_record(struct ib_cm_id *id, const struct ib_cm_event *e)
{
	struct fk *fk = fk_cur;
	struct fk_window *w;
	struct fk_event *r;

	spin_lock_irq(&fk->lock);
	w = fk_window(fk, id->local_id, false);
	if (w && w->row)
		w->row->events |= BIT(e->event);
	if (fk->nevents >= FK_EVENTS_MAX) {
		fk->nevents++;
		spin_unlock_irq(&fk->lock);
		return;
	}
	r = &fk->events[fk->nevents++];
	r->id = id;
	r->context = id->context;
	r->type = e->event;
	r->state = id->state;
	switch (e->event) {
	case IB_CM_REQ_RECEIVED:
		r->listen_id = e->param.req_rcvd.listen_id;
		r->qpn = e->param.req_rcvd.remote_qpn;
		r->qp_type = e->param.req_rcvd.qp_type;
		r->alt_path = !!e->param.req_rcvd.alternate_path;
		r->path_slid =
			be32_to_cpu(sa_path_get_slid(e->param.req_rcvd.primary_path));
		r->path_dlid =
			be32_to_cpu(sa_path_get_dlid(e->param.req_rcvd.primary_path));
		r->path_sl = e->param.req_rcvd.primary_path->sl;
		break;
	case IB_CM_SIDR_REQ_RECEIVED:
		r->listen_id = e->param.sidr_req_rcvd.listen_id;
		break;
	case IB_CM_REP_RECEIVED:
		r->qpn = e->param.rep_rcvd.remote_qpn;
		break;
	case IB_CM_REJ_RECEIVED:
		r->reason = e->param.rej_rcvd.reason;
		r->ari_length = e->param.rej_rcvd.ari_length;
		if (e->param.rej_rcvd.ari)
			memcpy(r->ari, e->param.rej_rcvd.ari,
			       min_t(u8, r->ari_length, FK_KEEP));
		break;
	case IB_CM_SIDR_REP_RECEIVED:
		r->status = e->param.sidr_rep_rcvd.status;
		r->qpn = e->param.sidr_rep_rcvd.qpn;
		break;
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
	case IB_CM_DREQ_ERROR:
	case IB_CM_SIDR_REQ_ERROR:
	case IB_CM_LAP_ERROR:
		r->status = e->param.send_status;
		break;
	default:
		break;
	}
	if (e->private_data)
		memcpy(r->pdata, e->private_data, FK_KEEP);
	if ((e->event == IB_CM_REQ_RECEIVED ||
	     e->event == IB_CM_SIDR_REQ_RECEIVED) && fk->nowned < FK_EVENTS_MAX)
		fk->owned[fk->nowned++] = id;
	spin_unlock_irq(&fk->lock);
}

static int fk_handler(struct ib_cm_id *id, const struct ib_cm_event *e)
{
	struct fk *fk = fk_cur;

	fk_record(id, e);
	if (e->event == IB_CM_REQ_RECEIVED && fk->swap_on_req) {
		id->cm_handler = fk_handler2;
		id->context = fk;
	}
	if (fk->hook) {
		fk->hook_calls++;
		fk->hook(fk, id, e);
	}
	return fk->ret_for[e->event];
}

/* The handler a REQ callback swaps in: records, and never destroys. */
static int fk_handler2(struct ib_cm_id *id, const struct ib_cm_event *e)
{
	fk_record(id, e);
	return 0;
}

/* ---- set-up and tear-down ---- */

static int fk_init(struct kunit *test)
{
	struct fk *fk = kunit_kzalloc(test, sizeof(*fk), GFP_KERNEL);

	if (!fk)
		return -ENOMEM;
	fk->test = test;
	spin_lock_init(&fk->lock);
	INIT_LIST_HEAD(&fk->posted);
	init_completion(&fk->release);

	fk->dev = kunit_kzalloc(test, sizeof(*fk->dev), GFP_KERNEL);
	/* The cm_device and its port are freed by cm_device_release(). */
	fk->cm_dev = kzalloc_flex(*fk->cm_dev, port, 1);
	fk->port = kzalloc_obj(*fk->port);
	if (!fk->dev || !fk->cm_dev || !fk->port) {
		kfree(fk->cm_dev);
		kfree(fk->port);
		return -ENOMEM;
	}
	fk->dev->node_guid = cpu_to_be64(FK_OUR_GUID);
	fk->dev->phys_port_cnt = 1;
	fk->dev->port_data = fk->port_data;
	fk->port_data[1].immutable.core_cap_flags = RDMA_CORE_PORT_IBA_IB;

	cm_device_init(fk->cm_dev);
	fk->cm_dev->ib_device = fk->dev;
	fk->cm_dev->nports = 1;
	fk->cm_dev->port[0] = fk->port;
	cm_port_init(fk->port);
	fk->port->cm_dev = fk->cm_dev;
	fk->port->port_num = 1;
	fk->port->mad_agent = &fk->agent;
	fk->port->send_agent = &fk->send_agent;
	fk->agent.context = fk->port;
	fk->send_agent.context = fk->port;
	fk->qp.pd = &fk->pd;
	fk->agent.qp = &fk->qp;
	fk->send_agent.qp = &fk->qp;

	fk->cm_dev->tp = &fk_transport;

	fk_cur = fk;
	test->priv = fk;
	/* On the device list, as a real device: paths find its port. */
	spin_lock_irq(&cm.lock);
	list_add_tail(&fk->cm_dev->list, &cm.devices);
	spin_unlock_irq(&cm.lock);
	return 0;
}

/*
 * Destroy what the test still owns, let everything outstanding end, and
 * check that nothing of the fake device is left behind.
 */
static void fk_clean(struct fk *fk)
{
	struct kunit *test = fk->test;
	struct cm_id_priv *p;
	unsigned long index;
	struct fk_msg *m;
	unsigned int i;

	/* The clean-up is an input of its own. */
	fk_close_windows(fk);
	/* A hook or the fake's ah_from_wc may still wait for the test. */
	complete_all(&fk->release);
	/* Ids the test still owns, then whatever is outstanding. */
	for (i = 0; i < fk->nowned; i++)
		if (fk->owned[i])
			ib_destroy_cm_id(fk->owned[i]);
	fk_settle(fk);
	/* As the agents going away would; destroyed ids go to timewait. */
	for (;;) {
		spin_lock_irq(&fk->lock);
		m = list_first_entry_or_null(&fk->posted, struct fk_msg, node);
		spin_unlock_irq(&fk->lock);
		if (!m)
			break;
		fk_complete(fk, m, IB_WC_WR_FLUSH_ERR);
	}
	fk_flush();
	fk_end_timewaits(fk);
	rcu_barrier();

	/* No answer's address was resolved on the receive path. */
	KUNIT_EXPECT_EQ(test, fk->wc_in_recv, 0U);
	/* Nothing of the fake device may be left behind. */
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&fk->cm_dev->kref), 1U);
	rcu_read_lock();
	xa_for_each(&cm.local_ids, index, p)
		if (xa_pointer_tag(p) == CM_XA_RECORD)
			KUNIT_FAIL(test, "timewait record left");
		else if (p->id.device == fk->dev)
			KUNIT_FAIL(test, "id %08x left in state %d",
				   be32_to_cpu(p->id.local_id), p->id.state);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 0);
}

static void fk_exit(struct kunit *test)
{
	struct fk *fk = test->priv;

	fk_clean(fk);
	spin_lock_irq(&cm.lock);
	list_del(&fk->cm_dev->list);
	spin_unlock_irq(&cm.lock);
	fk_close_windows(fk);
	fk_cur = NULL;
	if (kref_read(&fk->cm_dev->kref) == 1)
		cm_device_put(fk->cm_dev);
}

/* Forget an owned id the test destroyed (or had destroyed) itself. */
static void fk_disown(struct fk *fk, struct ib_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < fk->nowned; i++)
		if (fk->owned[i] == id)
			fk->owned[i] = NULL;
}

static struct ib_cm_id *fk_new_id(struct fk *fk)
{
	struct ib_cm_id *id = ib_create_cm_id(fk->dev, fk_handler, fk);

	KUNIT_ASSERT_FALSE(fk->test, IS_ERR_OR_NULL(id));
	spin_lock_irq(&fk->lock);
	fk->owned[fk->nowned++] = id;
	spin_unlock_irq(&fk->lock);
	return id;
}

static void fk_destroy(struct fk *fk, struct ib_cm_id *id)
{
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
	fk_settle(fk);
}

/* Keep @id's inputs waiting, as if its work were busy elsewhere. */
static void fk_hold(struct ib_cm_id *id)
{
	cm_hold_work(to_priv(id));
}

/* Let them run, and everything they lead to. */
static void fk_let_go(struct fk *fk, struct ib_cm_id *id)
{
	cm_release_work(to_priv(id));
	fk_flush();
	fk_settle(fk);
}

static struct fk_sent *fk_last(struct fk *fk)
{
	return fk->nsent ? &fk->sent[min(fk->nsent, FK_SENT_MAX) - 1] : NULL;
}

/* The last message sent, as its message type @m (req, rep, rej ...). */
#define FK_LAST(fk, m)	(&fk_last(fk)->mad.m)

/* Our comm ID in a REJ, DREQ or DREP we sent, read as its own type. */
static u32 fk_sent_local_id(const struct fk_sent *s)
{
	switch (s->attr) {
	case CM_REJ_ATTR_ID:
		return IBA_GET(CM_REJ_LOCAL_COMM_ID, &s->mad.rej);
	case CM_DREQ_ATTR_ID:
		return IBA_GET(CM_DREQ_LOCAL_COMM_ID, &s->mad.dreq);
	case CM_DREP_ATTR_ID:
		return IBA_GET(CM_DREP_LOCAL_COMM_ID, &s->mad.drep);
	default:
		return 0;
	}
}

static struct fk_event *fk_last_event(struct fk *fk)
{
	return fk->nevents ? &fk->events[min(fk->nevents, FK_EVENTS_MAX) - 1] :
			     NULL;
}

/* @n messages sent so far, the last of attribute @a (0: any). */
#define FK_EXPECT_SENT(f, n, a) do {					\
	struct fk *__fk = (f);						\
	unsigned int __n = (n);						\
	__be16 __a = (a);						\
									\
	KUNIT_ASSERT_EQ(__fk->test, __fk->nsent, __n);			\
	if (__n && __a)							\
		KUNIT_EXPECT_EQ(__fk->test, fk_last(__fk)->attr, __a);	\
} while (0)

/* Any event type (IB_CM_REQ_ERROR is 0). */
#define FK_ANY		(-1)

/* @n events so far, the last of type @t (FK_ANY: any). */
#define FK_EXPECT_EVENT(f, n, t) do {					\
	struct fk *__fk = (f);						\
	unsigned int __n = (n);						\
	int __t = (t);							\
									\
	KUNIT_ASSERT_EQ(__fk->test, __fk->nevents, __n);		\
	if (__n && __t != FK_ANY)					\
		KUNIT_EXPECT_EQ(__fk->test, (int)fk_last_event(__fk)->type, \
				__t);					\
} while (0)

/* ---- messages from the peer ---- */

/* The peer builds its MADs as we do ours: a zeroed CM MAD of class 2. */
static void fk_mad(union cm_kunit_msg *mad, __be16 attr, u64 tid)
{
	memset(mad, 0, sizeof(*mad));
	cm_init_mad(&mad->mad.mad_hdr, attr, cpu_to_be64(tid));
}

/* An RC REQ from the peer's comm ID @peer and QP @qpn for @sid. */
static void fk_req(union cm_kunit_msg *mad, u32 peer, u32 qpn, u64 sid)
{
	fk_mad(mad, CM_REQ_ATTR_ID, 0x7000 + peer);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, &mad->req, peer);
	IBA_SET(CM_REQ_SERVICE_ID, &mad->req, sid);
	IBA_SET(CM_REQ_LOCAL_CA_GUID, &mad->req, FK_PEER_GUID);
	IBA_SET(CM_REQ_LOCAL_QPN, &mad->req, qpn);
	IBA_SET(CM_REQ_RESPONDER_RESOURCES, &mad->req, 4);
	IBA_SET(CM_REQ_INITIATOR_DEPTH, &mad->req, 4);
	IBA_SET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, &mad->req, 20);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, &mad->req, 0);	/* RC */
	IBA_SET(CM_REQ_STARTING_PSN, &mad->req, 0x1000);
	IBA_SET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, &mad->req, 20);
	IBA_SET(CM_REQ_RETRY_COUNT, &mad->req, 7);
	IBA_SET(CM_REQ_PARTITION_KEY, &mad->req, 0xffff);
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, &mad->req, IB_MTU_1024);
	IBA_SET(CM_REQ_RNR_RETRY_COUNT, &mad->req, 7);
	IBA_SET(CM_REQ_MAX_CM_RETRIES, &mad->req, 3);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_PORT_LID, &mad->req, FK_PEER_LID);
	IBA_SET(CM_REQ_PRIMARY_REMOTE_PORT_LID, &mad->req, 1);
	IBA_SET(CM_REQ_PRIMARY_SL, &mad->req, 0);
	IBA_SET(CM_REQ_PRIMARY_SUBNET_LOCAL, &mad->req, 1);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, &mad->req, FK_LIFE + 1);
	memset(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, &mad->req), 0xa5, FK_KEEP);
}

/* A REP from the peer answering our comm ID @ours. */
static void fk_rep(union cm_kunit_msg *mad, u32 ours, u32 peer, u32 qpn)
{
	fk_mad(mad, CM_REP_ATTR_ID, 0x100);
	IBA_SET(CM_REP_LOCAL_COMM_ID, &mad->rep, peer);
	IBA_SET(CM_REP_REMOTE_COMM_ID, &mad->rep, ours);
	IBA_SET(CM_REP_LOCAL_QPN, &mad->rep, qpn);
	IBA_SET(CM_REP_STARTING_PSN, &mad->rep, 0x2000);
	IBA_SET(CM_REP_RESPONDER_RESOURCES, &mad->rep, 4);
	IBA_SET(CM_REP_INITIATOR_DEPTH, &mad->rep, 4);
	IBA_SET(CM_REP_RNR_RETRY_COUNT, &mad->rep, 7);
	IBA_SET(CM_REP_LOCAL_CA_GUID, &mad->rep, FK_PEER_GUID);
	memset(IBA_GET_MEM_PTR(CM_REP_PRIVATE_DATA, &mad->rep), 0x5a, FK_KEEP);
}

/* An RTU, DREQ, DREP or REJ of the exchange between @ours and @peer. */
static void fk_conn_msg(union cm_kunit_msg *mad, __be16 attr, u32 ours,
			u32 peer)
{
	fk_mad(mad, attr, 0x200);
	switch (attr) {
	case CM_RTU_ATTR_ID:
		IBA_SET(CM_RTU_LOCAL_COMM_ID, &mad->rtu, peer);
		IBA_SET(CM_RTU_REMOTE_COMM_ID, &mad->rtu, ours);
		break;
	case CM_DREQ_ATTR_ID:
		IBA_SET(CM_DREQ_LOCAL_COMM_ID, &mad->dreq, peer);
		IBA_SET(CM_DREQ_REMOTE_COMM_ID, &mad->dreq, ours);
		break;
	case CM_DREP_ATTR_ID:
		IBA_SET(CM_DREP_LOCAL_COMM_ID, &mad->drep, peer);
		IBA_SET(CM_DREP_REMOTE_COMM_ID, &mad->drep, ours);
		break;
	case CM_REJ_ATTR_ID:
		IBA_SET(CM_REJ_LOCAL_COMM_ID, &mad->rej, peer);
		IBA_SET(CM_REJ_REMOTE_COMM_ID, &mad->rej, ours);
		break;
	}
}

static void fk_dreq(union cm_kunit_msg *mad, u32 ours, u32 peer, u32 our_qpn)
{
	fk_conn_msg(mad, CM_DREQ_ATTR_ID, ours, peer);
	IBA_SET(CM_DREQ_REMOTE_QPN_EECN, &mad->dreq, our_qpn);
}

static void fk_rej(union cm_kunit_msg *mad, u32 ours, u32 peer, u8 rejected,
		   u16 reason)
{
	fk_conn_msg(mad, CM_REJ_ATTR_ID, ours, peer);
	IBA_SET(CM_REJ_MESSAGE_REJECTED, &mad->rej, rejected);
	IBA_SET(CM_REJ_REASON, &mad->rej, reason);
}

static void fk_mra(union cm_kunit_msg *mad, u32 ours, u32 peer, u8 mraed,
		   u8 service_timeout)
{
	fk_mad(mad, CM_MRA_ATTR_ID, 0x300);
	IBA_SET(CM_MRA_LOCAL_COMM_ID, &mad->mra, peer);
	IBA_SET(CM_MRA_REMOTE_COMM_ID, &mad->mra, ours);
	IBA_SET(CM_MRA_MESSAGE_MRAED, &mad->mra, mraed);
	IBA_SET(CM_MRA_SERVICE_TIMEOUT, &mad->mra, service_timeout);
}

static void fk_sidr_req(union cm_kunit_msg *mad, u32 request_id, u64 sid)
{
	fk_mad(mad, CM_SIDR_REQ_ATTR_ID, 0x400 + request_id);
	IBA_SET(CM_SIDR_REQ_REQUESTID, &mad->sidr_req, request_id);
	IBA_SET(CM_SIDR_REQ_PARTITION_KEY, &mad->sidr_req, 0xffff);
	IBA_SET(CM_SIDR_REQ_SERVICEID, &mad->sidr_req, sid);
}

static void fk_sidr_rep(union cm_kunit_msg *mad, u32 request_id, u8 status,
			u32 qpn)
{
	fk_mad(mad, CM_SIDR_REP_ATTR_ID, 0x500);
	IBA_SET(CM_SIDR_REP_REQUESTID, &mad->sidr_rep, request_id);
	IBA_SET(CM_SIDR_REP_STATUS, &mad->sidr_rep, status);
	IBA_SET(CM_SIDR_REP_QPN, &mad->sidr_rep, qpn);
	IBA_SET(CM_SIDR_REP_Q_KEY, &mad->sidr_rep, 0x11111111);
}

static void fk_lap(union cm_kunit_msg *mad, u32 ours, u32 peer, u32 our_qpn)
{
	fk_mad(mad, CM_LAP_ATTR_ID, 0x600);
	IBA_SET(CM_LAP_LOCAL_COMM_ID, &mad->lap, peer);
	IBA_SET(CM_LAP_REMOTE_COMM_ID, &mad->lap, ours);
	IBA_SET(CM_LAP_REMOTE_QPN_EECN, &mad->lap, our_qpn);
	IBA_SET(CM_LAP_ALTERNATE_LOCAL_PORT_LID, &mad->lap, FK_PEER_LID + 1);
	IBA_SET(CM_LAP_ALTERNATE_REMOTE_PORT_LID, &mad->lap, 2);
	IBA_SET(CM_LAP_ALTERNATE_LOCAL_ACK_TIMEOUT, &mad->lap, FK_LIFE + 1);
}

/* ---- our side's calls ---- */

static struct sa_path_rec fk_path = {
	.rec_type = SA_PATH_REC_TYPE_IB,
	.mtu = IB_MTU_1024,
	.packet_life_time = FK_LIFE,
	.pkey = cpu_to_be16(0xffff),
	.ib.dlid = cpu_to_be16(FK_PEER_LID),
};

static u8 fk_pdata[FK_KEEP] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

static int fk_send_req_type(struct ib_cm_id *id, enum ib_qp_type qp_type)
{
	struct ib_cm_req_param param = {
		.primary_path = &fk_path,
		.service_id = cpu_to_be64(FK_SID),
		.qp_num = FK_OUR_QPN,
		.qp_type = qp_type,
		.starting_psn = 0x3000,
		.private_data = fk_pdata,
		.private_data_len = sizeof(fk_pdata),
		.responder_resources = 4,
		.initiator_depth = 4,
		.remote_cm_response_timeout = 20,
		.local_cm_response_timeout = 20,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.max_cm_retries = 3,
	};

	return ib_send_cm_req(id, &param);
}

static int fk_send_req(struct ib_cm_id *id)
{
	return fk_send_req_type(id, IB_QPT_RC);
}

static int fk_send_rep(struct ib_cm_id *id)
{
	struct ib_cm_rep_param param = {
		.qp_num = FK_OUR_QPN,
		.starting_psn = 0x4000,
		.private_data = fk_pdata,
		.private_data_len = sizeof(fk_pdata),
		.responder_resources = 4,
		.initiator_depth = 4,
		.rnr_retry_count = 7,
	};

	return ib_send_cm_rep(id, &param);
}

static int fk_send_sidr_req(struct ib_cm_id *id)
{
	struct ib_cm_sidr_req_param param = {
		.path = &fk_path,
		.service_id = cpu_to_be64(FK_SID),
		.timeout_ms = 100,
		.max_cm_retries = 2,
	};

	return ib_send_cm_sidr_req(id, &param);
}

static u32 fk_local(struct ib_cm_id *id)
{
	return be32_to_cpu(id->local_id);
}

/* ---- reaching a state ---- */

/* Active side to REQ_SENT: one REQ out, retried. */
static struct ib_cm_id *fk_active_req_sent(struct fk *fk)
{
	struct ib_cm_id *id = fk_new_id(fk);

	KUNIT_ASSERT_EQ(fk->test, fk_send_req(id), 0);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_REQ_SENT);
	return id;
}

static struct ib_cm_id *fk_active_rep_rcvd(struct fk *fk)
{
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_REP_RCVD);
	return id;
}

static struct ib_cm_id *fk_active_established(struct fk *fk)
{
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);

	KUNIT_ASSERT_EQ(fk->test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_ESTABLISHED);
	return id;
}

static struct ib_cm_id *fk_listen(struct fk *fk)
{
	struct ib_cm_id *id = fk_new_id(fk);

	KUNIT_ASSERT_EQ(fk->test, ib_cm_listen(id, cpu_to_be64(FK_SID)), 0);
	return id;
}

/* Passive side to REQ_RCVD: the id the REQ callback handed over. */
static struct ib_cm_id *fk_passive_req_rcvd(struct fk *fk)
{
	unsigned int before = fk->nevents;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(fk->test, fk->nevents, before + 1);
	KUNIT_ASSERT_EQ(fk->test, fk_last_event(fk)->type, IB_CM_REQ_RECEIVED);
	KUNIT_ASSERT_EQ(fk->test, fk_last_event(fk)->id->state,
			IB_CM_REQ_RCVD);
	return fk_last_event(fk)->id;
}

static struct ib_cm_id *fk_passive_rep_sent(struct fk *fk)
{
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);

	KUNIT_ASSERT_EQ(fk->test, fk_send_rep(id), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_REP_SENT);
	return id;
}

static struct ib_cm_id *fk_passive_established(struct fk *fk)
{
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg mad;

	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_ESTABLISHED);
	return id;
}

/* How long until the timewait record of our comm ID @local ends, or -1. */
static long fk_record_left(u32 local)
{
	struct cm_timewait *tw;
	long left = -1;

	rcu_read_lock();
	tw = xa_load(&cm.local_ids, cm_local_index(cpu_to_be32(local)));
	if (xa_pointer_tag(tw) == CM_XA_RECORD) {
		tw = xa_untag_pointer(tw);
		left = (long)(READ_ONCE(tw->timer.expires) - jiffies);
	}
	rcu_read_unlock();
	return left;
}

/* Wait (at most 30 s) until @n handlers are held up. */
static void fk_wait_held(struct fk *fk, int n)
{
	unsigned int ms;

	for (ms = 0; atomic_read(&fk->held) < n && ms < 30000; ms += 20)
		msleep(20);
	KUNIT_EXPECT_GE(fk->test, atomic_read(&fk->held), n);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for ib_cm's protocol engine, driven through a fake MAD
 * transport.  Included by cm_kunit.c, so cm.c's statics are in reach.
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
 * Suites:
 *   ib_cm_active      the active side: REQ, MRA, REP, RTU, REJ, DREQ/DREP
 *   ib_cm_passive     the passive side: listeners, REQ, MRA, REP, RTU
 *   ib_cm_sidr_lap    SIDR on both sides; LAP and APR received
 *   ib_cm_duplicates  duplicate and stale messages, REJ TIMEOUT and ARI
 *   ib_cm_contract    the handler contract
 *   ib_cm_states      destroy and time out in every state
 *   ib_cm_floods      the backlog of received MADs is bounded
 *   ib_cm_ordering    MADs that arrive behind inputs not yet processed
 *   ib_cm_alloc_faults every allocation of an exchange fails once
 */

#define FK_SENT_MAX	48
#define FK_EVENTS_MAX	32
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
	union cm_kunit_msg mad;
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
 * is allowed, never under a spinlock.
 */
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
	atomic_inc(&fk_cur->ahs);
	atomic_inc(&fk_cur->ahs_made);
	return ah;
}

static void fk_destroy_ah(struct ib_ah *ah, u32 flags)
{
	atomic_dec(&fk_cur->ahs);
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
		s->send_only = msg->mad_agent == &fk->send_agent;
		s->mad = m->mad;
	}
	fk->nsent++;
	m->timeout_ms = msg->timeout_ms;
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
	/* The MAD layer tried as often as the id asked. */
	m->buf.retries = ((struct cm_id_priv *)m->buf.context[0])->max_cm_retries;
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
		/* As if the timer fired now. */
		if (timer_delete(&p->tw_timer))
			cm_timewait_timer(&p->tw_timer);
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
	struct fk_event *r;

	spin_lock_irq(&fk->lock);
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

/* ---------------------------------------------------------------------
 * The active side
 */

static void req_goes_out_with_our_ids_and_waits(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg *req;

	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	req = &fk->sent[0].mad;
	KUNIT_EXPECT_TRUE(test, fk->sent[0].tracked);
	KUNIT_EXPECT_FALSE(test, fk->sent[0].send_only);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_LOCAL_COMM_ID, &req->req), fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_SERVICE_ID, &req->req), FK_SID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_LOCAL_QPN, &req->req), FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_LOCAL_CA_GUID, &req->req), FK_OUR_GUID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_MAX_CM_RETRIES, &req->req), 3ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_PRIMARY_REMOTE_PORT_LID, &req->req),
			(u64)FK_PEER_LID);
	KUNIT_EXPECT_EQ(test, memcmp(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, &req->req),
				     fk_pdata, sizeof(fk_pdata)), 0);
	KUNIT_EXPECT_NOT_NULL(test, fk_tracked(fk));
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REQ_ATTR_ID), 0L);
}

static void rep_is_delivered_and_stops_the_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	struct fk_event *e = fk_last_event(fk);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, e->id, id);
	KUNIT_EXPECT_PTR_EQ(test, e->context, (void *)fk);
	KUNIT_EXPECT_EQ(test, e->pdata[0], 0x5a);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(id->remote_id), FK_PEER_ID);
	/* The REQ was cancelled and completed: nothing left to retry. */
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV, CM_REP_ATTR_ID), 1L);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
}

static void rtu_completes_the_active_side(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	FK_EXPECT_SENT(fk, 2, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_FALSE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_RTU_LOCAL_COMM_ID, FK_LAST(fk, rtu)),
			fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_RTU_REMOTE_COMM_ID, FK_LAST(fk, rtu)),
			FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_RTU_ATTR_ID), 1L);
}

static void rep_for_an_unknown_id_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	long before = fk_drops(fk, CM_DROP_UNMATCHED);
	union cm_kunit_msg mad;

	fk_rep(&mad, fk_local(id) ^ 0x00ff0000, FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REQ_SENT);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), before + 1);
	KUNIT_EXPECT_EQ(test, fk->rx_freed, 1U);
}

static void mra_for_the_req_extends_its_timeout(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	struct fk_msg *req = fk_tracked(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_NOT_NULL(test, req);
	fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ, 24);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REQ_RCVD);
	KUNIT_EXPECT_EQ(test, req->timeout_ms,
			cm_iba_to_ms(24) + cm_iba_to_ms(FK_LIFE + 1));
	FK_EXPECT_EVENT(fk, 1, IB_CM_MRA_RECEIVED);
	/* A second one is a duplicate. */
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_MRA_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 1, IB_CM_MRA_RECEIVED);
	/* The REP still completes the exchange. */
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REP_RECEIVED);
}

static void mra_for_another_message_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP, 24);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REQ_SENT);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
}

static void req_timeout_reports_req_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);

	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status,
			(int)IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	/* The REQ and its 3 retries were counted. */
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REQ_ATTR_ID), 4L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT_RETRIES, CM_REQ_ATTR_ID), 3L);
	/* The id is reusable. */
	KUNIT_EXPECT_EQ(test, fk_send_req(id), 0);
}

/*
 * The timeout of a retried send is reported without any allocation: with
 * the next allocation of this task set to fail, REQ_ERROR still comes, and
 * the failure was never used.
 */
static void req_timeout_needs_no_allocation(struct kunit *test)
{
#ifdef CONFIG_FAULT_INJECTION
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	struct fk_msg *req = fk_tracked(fk);

	KUNIT_ASSERT_NOT_NULL(test, req);
	req->buf.retries = to_priv(id)->max_cm_retries;
	current->fail_nth = 1;
	fk_complete(fk, req, IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, current->fail_nth, 1U);
	current->fail_nth = 0;
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
#else
	kunit_skip(test, "needs CONFIG_FAULT_INJECTION");
#endif
}

static void rej_in_req_sent_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_CONSUMER_DEFINED);
	memset(IBA_GET_MEM_PTR(CM_REJ_PRIVATE_DATA, &mad.rej), 0x77, FK_KEEP);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason,
			(int)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->pdata[0], 0x77);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

static void rej_timeout_carries_the_guid_as_ari(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	__be64 guid = cpu_to_be64(FK_PEER_GUID);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_TIMEOUT);
	IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad.rej, sizeof(guid));
	memcpy(IBA_GET_MEM_PTR(CM_REJ_ARI, &mad.rej), &guid, sizeof(guid));
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason,
			(int)IB_CM_REJ_TIMEOUT);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->ari_length, 8);
	KUNIT_EXPECT_EQ(test, memcmp(fk_last_event(fk)->ari, &guid, 8), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void rej_with_oversized_ari_length_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_INVALID_GID);
	IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad.rej, 0x7f);
	fk_receive(fk, &mad);
	/*
	 * As with the stock CM, the REJ ends the connect at once; of the 127
	 * bytes of ARI it claims, the 72 the REJ has are passed on.
	 */
	FK_EXPECT_EVENT(fk, 1, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason, IB_CM_REJ_INVALID_GID);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->ari_length,
			IB_CM_REJ_ARI_LENGTH);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), 0L);
}

/* Response timeouts above 31 are taken, as the stock CM takes them. */
static void req_response_timeouts_above_31_are_clamped(struct kunit *test)
{
	static const u8 timeouts[] = { 31, 32, 255 };
	struct fk *fk = test->priv;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		struct ib_cm_id *id = fk_new_id(fk);
		struct ib_cm_req_param param = {
			.primary_path = &fk_path,
			.service_id = cpu_to_be64(FK_SID),
			.qp_num = FK_OUR_QPN,
			.qp_type = IB_QPT_RC,
			.remote_cm_response_timeout = timeouts[i],
			.local_cm_response_timeout = timeouts[i],
			.max_cm_retries = 16,
			.retry_count = 8,
			.rnr_retry_count = 9,
		};
		union cm_kunit_msg *req;

		/* ib_srp asks for subnet_timeout + 2, up to 33. */
		KUNIT_ASSERT_EQ_MSG(test, ib_send_cm_req(id, &param), 0,
				    "timeout %u", timeouts[i]);
		req = &fk_last(fk)->mad;
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT,
					&req->req), 31ULL);
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT,
					&req->req), 31ULL);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_MAX_CM_RETRIES, &req->req),
				15ULL);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_RETRY_COUNT, &req->req),
				7ULL);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_RNR_RETRY_COUNT, &req->req),
				7ULL);
		KUNIT_EXPECT_EQ(test, to_priv(id)->timeout_ms,
				2 * cm_iba_to_ms(FK_LIFE) + cm_iba_to_ms(31));
		fk_destroy(fk, id);
	}
}

static void rej_from_a_stranger_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	/* Our ID, but another peer's comm ID. */
	fk_rej(&mad, fk_local(id), FK_PEER_ID + 1, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

static void dreq_and_drep_pass_through_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, fk_pdata, 8), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_SENT);
	FK_EXPECT_SENT(fk, 3, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREQ_REMOTE_QPN_EECN, FK_LAST(fk, dreq)),
			(u64)FK_PEER_QPN);

	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));

	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void dreq_timeout_reports_dreq_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
}

static void dreq_received_is_answered_by_drep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, fk_pdata, 4), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 3, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
			fk_local(id));
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
}

static void dreq_for_another_qpn_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	long before = fk_drops(fk, CM_DROP_FIELD);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN + 1);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), before + 1);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

static void crossing_dreqs_both_end_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
}

static void rtu_is_not_accepted_on_the_active_side(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

struct fk_qp_case {
	enum ib_qp_type qp_type;
	u8 transport;		/* the REQ's transport service type */
	const char *name;
};

static const struct fk_qp_case fk_active_qp_cases[] = {
	{ IB_QPT_RC, CM_REQ_TRANSPORT_RC, "RC" },
	{ IB_QPT_UC, CM_REQ_TRANSPORT_UC, "UC" },
	{ IB_QPT_XRC_INI, CM_REQ_TRANSPORT_EXTENDED, "XRC" },
};

static void fk_qp_desc(const struct fk_qp_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_active_qp, fk_active_qp_cases, fk_qp_desc);

/* Each QP type connects; an XRC target's QPN comes in the REP's EECN. */
static void each_qp_type_connects_from_the_active_side(struct kunit *test)
{
	const struct fk_qp_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, fk_send_req_type(id, c->qp_type), 0);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_TRANSPORT_SERVICE_TYPE, FK_LAST(fk, req)),
			(u64)c->transport);
	if (c->qp_type == IB_QPT_XRC_INI)
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_EXTENDED_TRANSPORT_TYPE, FK_LAST(fk, req)),
				(u64)CM_REQ_EXT_TRANSPORT_XRC);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	if (c->qp_type == IB_QPT_XRC_INI) {
		IBA_SET(CM_REP_LOCAL_QPN, &mad.rep, 0);
		IBA_SET(CM_REP_LOCAL_EE_CONTEXT_NUMBER, &mad.rep, FK_PEER_QPN);
	}
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->qpn, FK_PEER_QPN);
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static struct kunit_case fk_active_cases[] = {
	KUNIT_CASE(req_goes_out_with_our_ids_and_waits),
	KUNIT_CASE(rep_is_delivered_and_stops_the_req),
	KUNIT_CASE(rtu_completes_the_active_side),
	KUNIT_CASE(rep_for_an_unknown_id_is_dropped),
	KUNIT_CASE(mra_for_the_req_extends_its_timeout),
	KUNIT_CASE(mra_for_another_message_is_ignored),
	KUNIT_CASE(req_timeout_reports_req_error),
	KUNIT_CASE(req_timeout_needs_no_allocation),
	KUNIT_CASE(rej_in_req_sent_is_delivered),
	KUNIT_CASE(rej_timeout_carries_the_guid_as_ari),
	KUNIT_CASE(rej_with_oversized_ari_length_is_delivered),
	KUNIT_CASE(req_response_timeouts_above_31_are_clamped),
	KUNIT_CASE(rej_from_a_stranger_is_ignored),
	KUNIT_CASE(dreq_and_drep_pass_through_timewait),
	KUNIT_CASE(dreq_timeout_reports_dreq_error),
	KUNIT_CASE(dreq_received_is_answered_by_drep),
	KUNIT_CASE(dreq_for_another_qpn_is_dropped),
	KUNIT_CASE(crossing_dreqs_both_end_in_timewait),
	KUNIT_CASE(rtu_is_not_accepted_on_the_active_side),
	KUNIT_CASE_PARAM(each_qp_type_connects_from_the_active_side,
			 fk_active_qp_gen_params),
	{}
};

static struct kunit_suite fk_active_suite = {
	.name = "ib_cm_active",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_active_cases,
};

/* ---------------------------------------------------------------------
 * The passive side
 */

static void req_on_a_listener_hands_over_a_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	union cm_kunit_msg mad;
	struct fk_event *e;

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	e = fk_last_event(fk);
	KUNIT_EXPECT_PTR_EQ(test, e->listen_id, listen);
	KUNIT_EXPECT_PTR_NE(test, e->id, listen);
	KUNIT_EXPECT_EQ(test, e->state, (int)IB_CM_REQ_RCVD);
	KUNIT_EXPECT_EQ(test, e->qpn, FK_PEER_QPN);
	KUNIT_EXPECT_EQ(test, e->pdata[0], 0xa5);
	/* The new id inherits the listener's handler and context. */
	KUNIT_EXPECT_PTR_EQ(test, e->context, (void *)fk);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e->id->remote_id), FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(e->id->service_id), FK_SID);
	KUNIT_EXPECT_EQ(test, listen->state, IB_CM_LISTEN);
	FK_EXPECT_SENT(fk, 0, 0);
}

static void req_without_listener_is_rejected_with_reason_8(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID + 1);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_INVALID_SERVICE_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, FK_LAST(fk, rej)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
			(u64)CM_MSG_RESPONSE_REQ);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
}

static void invalid_req_is_dropped_and_counted(struct kunit *test)
{
	struct fk *fk = test->priv;
	long before = fk_drops(fk, CM_DROP_FIELD);
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, &mad.req, 0);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), before + 1);
	KUNIT_EXPECT_EQ(test, fk->rx_freed, 1U);
}

static void rep_goes_out_on_the_send_only_agent(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg *rep;

	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	rep = &fk_last(fk)->mad;
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->send_only);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_COMM_ID, &rep->rep), fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_REMOTE_COMM_ID, &rep->rep),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_QPN, &rep->rep), (u64)FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_CA_GUID, &rep->rep), FK_OUR_GUID);
	/* The transaction ID of the REQ is kept. */
	KUNIT_EXPECT_EQ(test, be64_to_cpu(rep->mad.mad_hdr.tid),
			0x7000ULL + FK_PEER_ID);
}

static void rtu_establishes_the_passive_side(struct kunit *test)
{
	struct fk *fk = test->priv;

	fk_passive_established(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

static void comm_est_establishes_before_the_rtu(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_USER_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	/* The late RTU changes nothing. */
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_USER_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/* As with the stock CM: established at once, the event follows. */
static void comm_est_establishes_before_notify_returns(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	unsigned int events = fk->nevents;

	/* The event waits as if the id's worker were busy. */
	fk_hold(id);
	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	/* The REP is not retried any more. */
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), -EISCONN);
	/*
	 * A disconnect right away is a normal one; the event, which comes
	 * after it, is not given, as the id is no longer established (as
	 * with the stock CM).
	 */
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_SENT);
	fk_let_go(fk, id);
	FK_EXPECT_EVENT(fk, events, FK_ANY);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
}

/* An alternate GID alone, without a LID, is no alternate path (stock). */
static void req_with_an_alternate_gid_alone_has_no_alternate_path(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	union ib_gid *gid;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	gid = IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID, &mad.req);
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
	gid->global.interface_id = cpu_to_be64(FK_PEER_GUID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_FALSE(test, fk_last_event(fk)->alt_path);
	FK_EXPECT_SENT(fk, 0, 0);
}

static void rep_timeout_reports_rep_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);

	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 2, IB_CM_REP_ERROR);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status,
			(int)IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_NE(test, id->state, IB_CM_REP_SENT);
}

static void mra_for_the_rep_extends_its_timeout(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	struct fk_msg *rep = fk_tracked(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_NOT_NULL(test, rep);
	fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP, 22);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REP_RCVD);
	FK_EXPECT_EVENT(fk, 2, IB_CM_MRA_RECEIVED);
	KUNIT_EXPECT_EQ(test, rep->timeout_ms,
			cm_iba_to_ms(22) + cm_iba_to_ms(to_priv(id)->av.timeout));
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	FK_EXPECT_EVENT(fk, 3, IB_CM_RTU_RECEIVED);
}

static void prepared_mra_answers_a_repeated_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_prepare_cm_mra(id), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REQ_SENT);
	FK_EXPECT_SENT(fk, 0, 0);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 1, CM_MRA_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_MESSAGE_MRAED, FK_LAST(fk, mra)),
			(u64)CM_MSG_RESPONSE_REQ);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_REMOTE_COMM_ID, FK_LAST(fk, mra)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_SERVICE_TIMEOUT, FK_LAST(fk, mra)),
			(u64)CM_MRA_SERVICE_TIMEOUT_VALUE);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	/* The REP may still follow. */
	KUNIT_EXPECT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_SENT);
}

static void rej_from_the_passive_side(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);

	KUNIT_ASSERT_EQ(test, ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED,
					     NULL, 0, fk_pdata, 4), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
			(u64)CM_MSG_RESPONSE_REQ);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void rej_of_our_rep_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_NE(test, id->state, IB_CM_REP_SENT);
}

static void dreq_from_the_active_side_ends_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_DREQ_RECEIVED);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 4, IB_CM_TIMEWAIT_EXIT);
}

static const u8 fk_transports[] = {
	CM_REQ_TRANSPORT_RC, CM_REQ_TRANSPORT_UC, CM_REQ_TRANSPORT_EXTENDED,
};

static void fk_transport_desc(const u8 *t, char *desc)
{
	strscpy(desc, *t == CM_REQ_TRANSPORT_RC ? "RC" :
		*t == CM_REQ_TRANSPORT_UC ? "UC" : "XRC", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_transport, fk_transports, fk_transport_desc);

/* RC, UC and XRC connections are all accepted, each with its QP type. */
static void each_transport_connects(struct kunit *test)
{
	const u8 *t = test->param_value;
	static const int types[] = {
		[CM_REQ_TRANSPORT_RC] = IB_QPT_RC,
		[CM_REQ_TRANSPORT_UC] = IB_QPT_UC,
		[CM_REQ_TRANSPORT_EXTENDED] = IB_QPT_XRC_TGT,
	};
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, &mad.req, *t);
	if (*t == CM_REQ_TRANSPORT_EXTENDED)
		IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, &mad.req, CM_REQ_EXT_TRANSPORT_XRC);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->qp_type, types[*t]);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void req_with_an_alternate_path_sets_up_both(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, &mad.req, FK_PEER_LID + 1);
	IBA_SET(CM_REQ_ALTERNATE_REMOTE_PORT_LID, &mad.req, 2);
	IBA_SET(CM_REQ_ALTERNATE_SUBNET_LOCAL, &mad.req, 1);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, &mad.req, FK_LIFE + 1);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_TRUE(test, fk_last_event(fk)->alt_path);
	id = fk_last_event(fk)->id;
	KUNIT_EXPECT_PTR_EQ(test, to_priv(id)->alt_av.port, fk->port);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&to_priv(id)->alt_av.ah_attr),
			FK_PEER_LID + 1);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&to_priv(id)->av.ah_attr),
			FK_PEER_LID);
	/* Without one, the alternate address stays empty. */
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_FALSE(test, fk_last_event(fk)->alt_path);
	KUNIT_EXPECT_NULL(test, to_priv(fk_last_event(fk)->id)->alt_av.port);
}

static void sidr_req_with_a_grh_remembers_the_gid(struct kunit *test)
{
	struct fk *fk = test->priv;
	union ib_gid gid = { .raw = { 0xfe, 0x80, [15] = 0x42 } };
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_sidr_req(&mad, 0x61, FK_SID);
	fk_receive_grh(fk, &mad, &gid);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	KUNIT_EXPECT_EQ(test, memcmp(&to_priv(id)->sidr_gid, &gid, sizeof(gid)),
			0);
	/* The same request ID from another GID is another request. */
	gid.raw[15]++;
	fk_receive_grh(fk, &mad, &gid);
	FK_EXPECT_EVENT(fk, 2, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test,
			fk_count(fk, CM_RECV_DUPLICATES, CM_SIDR_REQ_ATTR_ID), 0L);
}

static void send_buffer_shortage_fails_the_call_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);

	fk->create_fails = true;
	KUNIT_EXPECT_EQ(test, ib_send_cm_rtu(id, NULL, 0), -ENOMEM);
	fk->create_fails = false;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/* A REQ whose path we cannot use: REJ INVALID_GID naming our GID. */
static void req_on_an_unusable_path_is_rejected(struct kunit *test)
{
	struct fk *fk = test->priv;
	union ib_gid ours;
	union cm_kunit_msg mad;

	fk_port_gid(fk->port, &ours);
	fk_listen(fk);
	fk->path_ret = -ENETUNREACH;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	fk->path_ret = 0;
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_INVALID_GID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REJECTED_INFO_LENGTH, FK_LAST(fk, rej)),
			(u64)sizeof(ours));
	KUNIT_EXPECT_EQ(test, memcmp(IBA_GET_MEM_PTR(CM_REJ_ARI, FK_LAST(fk, rej)),
				     &ours, sizeof(ours)), 0);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, FK_LAST(fk, rej)),
			(u64)FK_PEER_ID);
	/* Nothing is left of the new id; the REQ may come again. */
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
}

static struct kunit_case fk_passive_cases[] = {
	KUNIT_CASE(req_on_a_listener_hands_over_a_new_id),
	KUNIT_CASE(req_without_listener_is_rejected_with_reason_8),
	KUNIT_CASE(invalid_req_is_dropped_and_counted),
	KUNIT_CASE(rep_goes_out_on_the_send_only_agent),
	KUNIT_CASE(rtu_establishes_the_passive_side),
	KUNIT_CASE(comm_est_establishes_before_the_rtu),
	KUNIT_CASE(comm_est_establishes_before_notify_returns),
	KUNIT_CASE(req_with_an_alternate_gid_alone_has_no_alternate_path),
	KUNIT_CASE(rep_timeout_reports_rep_error),
	KUNIT_CASE(mra_for_the_rep_extends_its_timeout),
	KUNIT_CASE(prepared_mra_answers_a_repeated_req),
	KUNIT_CASE(rej_from_the_passive_side),
	KUNIT_CASE(rej_of_our_rep_is_delivered),
	KUNIT_CASE(dreq_from_the_active_side_ends_in_timewait),
	KUNIT_CASE_PARAM(each_transport_connects, fk_transport_gen_params),
	KUNIT_CASE(req_with_an_alternate_path_sets_up_both),
	KUNIT_CASE(sidr_req_with_a_grh_remembers_the_gid),
	KUNIT_CASE(send_buffer_shortage_fails_the_call_only),
	KUNIT_CASE(req_on_an_unusable_path_is_rejected),
	{}
};

static struct kunit_suite fk_passive_suite = {
	.name = "ib_cm_passive",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_passive_cases,
};

/* ---------------------------------------------------------------------
 * SIDR on both sides; LAP and APR received
 */

static void sidr_req_and_rep_resolve_a_service(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_SIDR_REQ_SENT);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REQ_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REQ_REQUESTID, FK_LAST(fk, sidr_req)),
			fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REQ_SERVICEID, FK_LAST(fk, sidr_req)),
			FK_SID);
	fk_sidr_rep(&mad, fk_local(id), IB_SIDR_SUCCESS, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status, (int)IB_SIDR_SUCCESS);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->qpn, FK_PEER_QPN);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	/* A second SIDR_REP finds nothing. */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REP_RECEIVED);
}

static void sidr_req_timeout_reports_sidr_req_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);

	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void sidr_req_on_a_listener_is_answered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	struct ib_cm_sidr_rep_param rep = {
		.qp_num = FK_OUR_QPN, .qkey = 0x22222222,
		.status = IB_SIDR_SUCCESS,
	};
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_sidr_req(&mad, 0x77, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk_last_event(fk)->listen_id, listen);
	id = fk_last_event(fk)->id;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_SIDR_REQ_RCVD);

	/* Repeated while pending: a duplicate, no second id. */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test,
			fk_count(fk, CM_RECV_DUPLICATES, CM_SIDR_REQ_ATTR_ID), 1L);

	KUNIT_ASSERT_EQ(test, ib_send_cm_sidr_rep(id, &rep), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_REQUESTID, FK_LAST(fk, sidr_rep)),
			0x77ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_QPN, FK_LAST(fk, sidr_rep)),
			(u64)FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_Q_KEY, FK_LAST(fk, sidr_rep)),
			0x22222222ULL);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void sidr_req_without_listener_is_unsupported(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_sidr_req(&mad, 0x78, FK_SID + 5);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_STATUS, FK_LAST(fk, sidr_rep)),
			(u64)IB_SIDR_UNSUPPORTED);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_REQUESTID, FK_LAST(fk, sidr_rep)),
			0x78ULL);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

static void lap_is_received_on_an_established_ib_connection(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_LAP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->lap_state, IB_CM_LAP_RCVD);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void lap_on_a_roce_port_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	long before = fk_drops(fk, CM_DROP_ATTR);
	union cm_kunit_msg mad;

	fk->port_data[1].immutable.core_cap_flags = RDMA_CORE_PORT_IBA_ROCE;
	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_ATTR), before + 1);
	KUNIT_EXPECT_EQ(test, id->lap_state, IB_CM_LAP_UNINIT);
}

static void lap_outside_established_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
}

static void apr_without_a_lap_is_not_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_mad(&mad, CM_APR_ATTR_ID, 0x700);
	IBA_SET(CM_APR_LOCAL_COMM_ID, &mad.apr, FK_PEER_ID);
	IBA_SET(CM_APR_REMOTE_COMM_ID, &mad.apr, fk_local(id));
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/* A SIDR_REP with a status this CM does not know is delivered, as stock. */
static void sidr_rep_with_an_unknown_status_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	fk_sidr_rep(&mad, fk_local(id), 0x42, FK_PEER_QPN);
	IBA_SET(CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH, &mad.sidr_rep, 0xff);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status, 0x42);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), 0L);
}

static struct kunit_case fk_sidr_lap_cases[] = {
	KUNIT_CASE(sidr_req_and_rep_resolve_a_service),
	KUNIT_CASE(sidr_rep_with_an_unknown_status_is_delivered),
	KUNIT_CASE(sidr_req_timeout_reports_sidr_req_error),
	KUNIT_CASE(sidr_req_on_a_listener_is_answered),
	KUNIT_CASE(sidr_req_without_listener_is_unsupported),
	KUNIT_CASE(lap_is_received_on_an_established_ib_connection),
	KUNIT_CASE(lap_on_a_roce_port_is_dropped),
	KUNIT_CASE(lap_outside_established_is_ignored),
	KUNIT_CASE(apr_without_a_lap_is_not_delivered),
	{}
};

static struct kunit_suite fk_sidr_lap_suite = {
	.name = "ib_cm_sidr_lap",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_sidr_lap_cases,
};

/* ---------------------------------------------------------------------
 * Duplicates and stale connections
 */

static void repeated_req_while_pending_is_counted_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_req_rcvd(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 2U);
}

static void repeated_req_after_rep_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_rep_sent(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	/* The REP is retried by the MAD layer; nothing extra goes out. */
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
}

static void repeated_req_in_timewait_gets_stale_conn(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 3, IB_CM_DREP_RECEIVED);
}

static void repeated_rep_when_established_resends_the_rtu(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REP_ATTR_ID), 1L);
	/* Counted as the stock module does: 1 + 1 retry. */
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_RTU_ATTR_ID), 3L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT_RETRIES, CM_RTU_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

static void repeated_rep_while_deciding_is_counted_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REP_ATTR_ID), 1L);
}

static void repeated_rep_after_mra_resends_the_mra(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_prepare_cm_mra(id), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REP_SENT);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 2, CM_MRA_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_MESSAGE_MRAED, FK_LAST(fk, mra)),
			(u64)CM_MSG_RESPONSE_REP);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REP_ATTR_ID), 1L);
	/* The RTU still completes the connection. */
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 3, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void repeated_dreq_in_timewait_resends_the_drep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 4, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
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

/*
 * Destroy a connected @id; the DREQ that destroy sends is retried until
 * the peer's DREP, which comes here at once.
 */
static void fk_destroy_answered(struct fk *fk, struct ib_cm_id *id)
{
	u32 local = fk_local(id), remote = be32_to_cpu(id->remote_id);
	union cm_kunit_msg mad;

	fk_destroy(fk, id);
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, remote);
	fk_receive(fk, &mad);
}

/*
 * A destroyed id retries its DREQ, silently: a peer that lost the first
 * is not left waiting for a disconnect.  The DREP, the peer's own DREQ
 * (answered by the CM), the last retry or a flush (the device going away)
 * ends it in a timewait record.
 */
static const char * const fk_dreq_ends[] = {
	"the DREP", "the peer's DREQ", "the last retry",
	"a flush (the device goes)",
};

static void fk_dreq_end_desc(const char * const *end, char *desc)
{
	strscpy(desc, *end, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_dreq_end, fk_dreq_ends, fk_dreq_end_desc);

static void destroy_retries_the_dreq_until_it_is_answered(struct kunit *test)
{
	const char * const *end = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	unsigned int events = fk->nevents, ids = fk_ids_on_device(fk);
	u32 local = fk_local(id);
	union cm_kunit_msg mad;
	struct fk_msg *m;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, fk->nsent, CM_DREQ_ATTR_ID);
	/* Outside the CM agent's flow-control window. */
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->send_only);
	m = fk_tracked(fk);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_GT(test, m->buf.retries, 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 0);

	switch (end - fk_dreq_ends) {
	case 0:
		fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, FK_PEER_ID);
		fk_receive(fk, &mad);
		break;
	case 1:
		fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		FK_EXPECT_SENT(fk, fk->nsent, CM_DREP_ATTR_ID);
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
				(u64)local);
		break;
	case 2:
		KUNIT_EXPECT_TRUE(test, fk_time_out(fk));
		break;
	default:
		fk_complete(fk, m, IB_WC_WR_FLUSH_ERR);
		fk_settle(fk);
		break;
	}
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	KUNIT_EXPECT_GT(test, fk_record_left(local), 0L);
	KUNIT_EXPECT_EQ(test, fk->nevents, events);
	fk_end_timewaits(fk);
}

/*
 * An id destroyed in timewait gives way to a small record, which still
 * answers the peer: a DREQ with a repeated DREP, a repeated REQ with REJ
 * STALE_CONN in the id's name.
 */
static void destroyed_id_in_timewait_leaves_a_small_record(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	unsigned int ids = fk_ids_on_device(fk);
	union cm_kunit_msg mad;
	u32 local = fk_local(id);

	if (!IS_ENABLED(CONFIG_LOCKDEP) && !IS_ENABLED(CONFIG_DEBUG_OBJECTS_TIMERS))
		KUNIT_EXPECT_LE(test, sizeof(struct cm_timewait), 128U);
	fk_destroy_answered(fk, id);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	KUNIT_EXPECT_GT(test, fk_record_left(local), 0L);

	fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
			(u64)local);

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 4, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_LOCAL_COMM_ID, FK_LAST(fk, rej)),
			(u64)local);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, FK_LAST(fk, rej)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID), 1L);

	/* When it ends, the peer's IDs are unknown again. */
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 0);
	KUNIT_EXPECT_EQ(test, fk_record_left(local), -1L);
	fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 5, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_FALSE(test, fk_last(fk)->resent);
	/* The listener is still there: the REQ is a new connection. */
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->type, IB_CM_REQ_RECEIVED);
}

/* A peer's local ACK timeout of 31 (2.4 hours) gives about a minute. */
static void timewait_from_a_huge_ack_timeout_is_cut(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	struct ib_cm_id *id;
	long left;
	u32 local;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, &mad.req, 31);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, fk_last_event(fk)->type, IB_CM_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_ESTABLISHED);
	local = fk_local(id);

	fk_destroy_answered(fk, id);
	left = fk_record_left(local);
	KUNIT_EXPECT_GT(test, left, (long)msecs_to_jiffies(cm_iba_to_ms(23)));
	KUNIT_EXPECT_LE(test, left,
			(long)msecs_to_jiffies(cm_iba_to_ms(CM_TIMEWAIT_MAX_IBA)));
	KUNIT_EXPECT_LE(test, cm_iba_to_ms(CM_TIMEWAIT_MAX_IBA), 70000);
}

static void fk_restore_max_timewait(void *old)
{
	WRITE_ONCE(cm_max_timewait, (unsigned int)(uintptr_t)old);
}

/* Past max_timewait records, a destroyed id leaves timewait at once. */
static void timewait_records_are_bounded(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *first = fk_passive_established(fk);
	struct ib_cm_id *second = fk_active_req_sent(fk);
	void *old = (void *)(uintptr_t)READ_ONCE(cm_max_timewait);
	union cm_kunit_msg mad;
	unsigned int ids;
	u32 local;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							fk_restore_max_timewait,
							old), 0);
	WRITE_ONCE(cm_max_timewait, 1);

	fk_rep(&mad, fk_local(second), FK_PEER_ID + 1, FK_PEER_QPN + 1);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(second, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, second->state, IB_CM_ESTABLISHED);

	fk_destroy_answered(fk, first);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	ids = fk_ids_on_device(fk);
	local = fk_local(second);
	fk_destroy_answered(fk, second);
	/* Its timer was set to fire now. */
	msleep(100);
	fk_flush();
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, fk_record_left(local), -1L);
}

/* The debugfs listing of ids, read whole through its seq_file operations. */
static char *fk_listing(struct kunit *test)
{
	struct seq_file m = { .size = 16384 };
	loff_t pos = 0;
	void *v;

	m.buf = kunit_kzalloc(test, m.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.buf);
	for (v = cm_ids_start(&m, &pos); v; v = cm_ids_next(&m, v, &pos))
		cm_ids_show(&m, v);
	cm_ids_stop(&m, v);
	KUNIT_EXPECT_FALSE(test, seq_has_overflowed(&m));
	m.buf[min(m.count, m.size - 1)] = '\0';
	return m.buf;
}

static void fk_expect_listed(struct kunit *test, const char *listing,
			     const char *fmt, ...)
{
	char want[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(listing, want),
				  "no \"%s\" in:\n%s", want, listing);
}

/* Each id and timewait record has its line, and a read resumes. */
static void listing_shows_ids_and_records(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	u32 local = fk_local(id);
	struct seq_file m = {};
	const char *list;
	loff_t pos;

	list = fk_listing(test);
	KUNIT_EXPECT_TRUE(test, str_has_prefix(list, "device port state lap_state"));
	fk_expect_listed(test, list, "- 0 LISTEN LAP_UNINIT 0x");
	fk_expect_listed(test, list, " 0x00000000 0x000000 0x000000 0x%016llx ",
			 FK_SID);
	fk_expect_listed(test, list, " 0 listener\n");
	fk_expect_listed(test, list,
			 "- 1 ESTABLISHED LAP_UNINIT 0x%08x 0x%08x 0x%06x 0x%06x 0x%016llx ",
			 local, FK_PEER_ID, FK_OUR_QPN, FK_PEER_QPN, FK_SID);

	/* Started at the id's position, the walk starts with the id. */
	pos = cm_local_index(id->local_id) + 1;
	KUNIT_EXPECT_PTR_EQ(test, cm_ids_start(&m, &pos), (void *)to_priv(id));
	cm_ids_stop(&m, NULL);

	fk_destroy_answered(fk, id);
	list = fk_listing(test);
	fk_expect_listed(test, list,
			 "- 0 TIMEWAIT - 0x%08x 0x%08x - - - - 0 timewait record ends_in_ms=",
			 local, FK_PEER_ID);
	fk_end_timewaits(fk);
	list = fk_listing(test);
	KUNIT_EXPECT_NULL(test, strstr(list, "TIMEWAIT"));
}

/*
 * A connection makes one address handle, when its path is set, and every
 * send along the path uses it: the REQ, the RTU, the DREQ.  An answer to
 * a stranger gets one of its own, gone when the send completes.
 */
static void one_address_handle_serves_a_connection(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 1);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);

	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID + 1);
	fk_receive(fk, &mad);		/* nobody listens: REJ, completed */
	KUNIT_EXPECT_EQ(test, fk_last(fk)->attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);

	fk_destroy_answered(fk, id);
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
}

/*
 * The passive side too: the REQ's id answers along the REQ's path, so the
 * way back that the work completion gives needs no handle of its own.
 */
static void a_passive_connection_makes_one_address_handle(struct kunit *test)
{
	struct fk *fk = test->priv;
	int before = atomic_read(&fk->ahs_made);
	struct ib_cm_id *id = fk_passive_established(fk);

	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), before + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);
	fk_destroy_answered(fk, id);
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
}

/*
 * When the device goes, the handles of ids nobody destroyed go with it
 * (the MAD layer frees their PD next); the ids cannot send any more, and
 * destroying them later destroys no handle twice.
 */
static void device_removal_destroys_live_handles(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);
	cm_forget_ahs(fk->cm_dev);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), -ENODEV);
	/* No new handle either. */
	KUNIT_EXPECT_EQ(test, fk_send_req(fk_new_id(fk)), -ENODEV);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 1);
	fk_destroy(fk, id);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
}

static void repeated_dreq_before_the_drep_is_counted_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, 2, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
}

static void dreq_for_a_forgotten_connection_gets_a_drep(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_dreq(&mad, 0x0badf00d, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 1, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_REMOTE_COMM_ID, FK_LAST(fk, drep)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
			0x0badf00dULL);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
}

static void new_req_from_a_busy_qp_is_stale(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	/* Same QPN and CA GUID, another comm ID: the old one is stale. */
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, fk->sent[1].attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, &fk->sent[1].mad.rej),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, &fk->sent[1].mad.rej),
			(u64)FK_PEER_ID + 1);
	/* And the established connection is torn down with a DREQ. */
	FK_EXPECT_SENT(fk, 3, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_SENT);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
}

static void new_req_from_another_qp_is_a_new_connection(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_established(fk);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
}

static void qpn_is_free_again_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 4, IB_CM_REQ_RECEIVED);
}

static void rep_from_a_busy_qp_is_stale(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	/* A passive connection holds (FK_PEER_QPN, FK_PEER_GUID). */
	fk_passive_established(fk);
	id = fk_active_req_sent(fk);
	fk_rep(&mad, fk_local(id), FK_PEER_ID + 7, FK_PEER_QPN);
	fk_receive(fk, &mad);
	/* REP, REQ, then a REJ for the REP and a DREQ for the old one. */
	FK_EXPECT_SENT(fk, 4, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk->sent[2].attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, &fk->sent[2].mad.rej),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, &fk->sent[2].mad.rej),
			(u64)FK_PEER_ID + 7);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREQ_REMOTE_COMM_ID, &fk->sent[3].mad.dreq),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_NE(test, id->state, IB_CM_REP_RCVD);
	KUNIT_EXPECT_NE(test, (int)fk_last_event(fk)->type,
			(int)IB_CM_REP_RECEIVED);
}

static void our_timeout_rej_names_our_guid(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	__be64 guid;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 2, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_TIMEOUT);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REJECTED_INFO_LENGTH, FK_LAST(fk, rej)),
			8ULL);
	memcpy(&guid, IBA_GET_MEM_PTR(CM_REJ_ARI, FK_LAST(fk, rej)), 8);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(guid), FK_OUR_GUID);
}

static struct kunit_case fk_dup_cases[] = {
	KUNIT_CASE(repeated_req_while_pending_is_counted_only),
	KUNIT_CASE(repeated_req_after_rep_is_ignored),
	KUNIT_CASE(repeated_req_in_timewait_gets_stale_conn),
	KUNIT_CASE(repeated_rep_when_established_resends_the_rtu),
	KUNIT_CASE(repeated_rep_while_deciding_is_counted_only),
	KUNIT_CASE(repeated_rep_after_mra_resends_the_mra),
	KUNIT_CASE(repeated_dreq_in_timewait_resends_the_drep),
	KUNIT_CASE(destroyed_id_in_timewait_leaves_a_small_record),
	KUNIT_CASE(timewait_from_a_huge_ack_timeout_is_cut),
	KUNIT_CASE(timewait_records_are_bounded),
	KUNIT_CASE(listing_shows_ids_and_records),
	KUNIT_CASE(one_address_handle_serves_a_connection),
	KUNIT_CASE(a_passive_connection_makes_one_address_handle),
	KUNIT_CASE(device_removal_destroys_live_handles),
	KUNIT_CASE(repeated_dreq_before_the_drep_is_counted_only),
	KUNIT_CASE(dreq_for_a_forgotten_connection_gets_a_drep),
	KUNIT_CASE(new_req_from_a_busy_qp_is_stale),
	KUNIT_CASE(new_req_from_another_qp_is_a_new_connection),
	KUNIT_CASE(qpn_is_free_again_in_timewait),
	KUNIT_CASE(rep_from_a_busy_qp_is_stale),
	KUNIT_CASE(our_timeout_rej_names_our_guid),
	{}
};

static struct kunit_suite fk_dup_suite = {
	.name = "ib_cm_duplicates",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_dup_cases,
};

/* ---------------------------------------------------------------------
 * The handler contract
 */

static void nonzero_return_from_req_destroys_the_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->ret_for[IB_CM_REQ_RECEIVED] = 1;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	fk_disown(fk, fk_last_event(fk)->id);
	/* The peer hears a REJ; only the listener is left. */
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	/* The REQ can come again and find the listener. */
	fk->ret_for[IB_CM_REQ_RECEIVED] = 0;
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
}

/* -ENOMEM from the REQ callback: no REJ, so that the peer may retry. */
static void enomem_from_req_destroys_without_rej(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->ret_for[IB_CM_REQ_RECEIVED] = -ENOMEM;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	fk_disown(fk, fk_last_event(fk)->id);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	/* The retried REQ is a new connection, not a duplicate. */
	fk->ret_for[IB_CM_REQ_RECEIVED] = 0;
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 0L);
}

static void nonzero_return_from_sidr_req_destroys_the_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->ret_for[IB_CM_SIDR_REQ_RECEIVED] = 1;
	fk_sidr_req(&mad, 0x99, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	fk_disown(fk, fk_last_event(fk)->id);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_STATUS, FK_LAST(fk, sidr_rep)),
			(u64)IB_SIDR_REJECT);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
}

static void nonzero_return_from_rep_rejects_and_destroys(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk->ret_for[IB_CM_REP_RECEIVED] = -EINVAL;
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	fk_disown(fk, id);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	FK_EXPECT_SENT(fk, 2, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

static void nonzero_return_from_dreq_answers_and_destroys(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk->ret_for[IB_CM_DREQ_RECEIVED] = 1;
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	fk_disown(fk, id);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, 3, CM_DREP_ATTR_ID);
	/* The id lingers in timewait for late DREQs, then goes. */
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

static void handler_swapped_in_req_callback_gets_the_rest(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk->swap_on_req = true;
	id = fk_passive_req_rcvd(fk);
	KUNIT_EXPECT_PTR_EQ(test, (void *)id->cm_handler, (void *)fk_handler2);
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk->ret_for[IB_CM_RTU_RECEIVED] = 1;	/* fk_handler2 ignores it */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk_last_event(fk)->context, (void *)fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void context_changed_between_events_is_seen(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;
	int marker;

	id->context = &marker;
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk_last_event(fk)->context, (void *)&marker);
	id->context = fk;
}

/* The consumer destroys the id in its handler and frees its context. */
static void fk_destroy_and_free(struct fk *fk, struct ib_cm_id *id,
				const struct ib_cm_event *e)
{
	if (e->event != IB_CM_DREQ_RECEIVED)
		return;
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
	kfree(id->context);	/* the id is gone as far as it knows */
}

static void destroy_from_own_callback_is_deferred(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	u32 local = fk_local(id);
	union cm_kunit_msg mad;
	unsigned int sent, events;

	/* A context of its own that the handler frees (KASAN watches). */
	id->context = kzalloc(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, id->context);
	fk->hook = fk_destroy_and_free;
	sent = fk->nsent;
	events = fk->nevents;
	kunit_warning_suppress(test) {
		fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 0);
	}
	/*
	 * Destroyed when the handler returned: DREQ_RCVD answers a DREP, and
	 * the id, in timewait, gave way to a record (so it is not read: it
	 * is freed after a grace period).
	 */
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, sent + 1, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_GT(test, fk_record_left(local), 0L);
	/* No further callback: a repeated DREQ is answered unseen. */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, sent + 2, CM_DREP_ATTR_ID);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

/* Destroy in the handler, and a non-zero return besides: destroyed once. */
static void fk_destroy_and_fail(struct fk *fk, struct ib_cm_id *id,
				const struct ib_cm_event *e)
{
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
}

static void destroy_in_callback_and_nonzero_return_destroy_once(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->hook = fk_destroy_and_fail;
	fk->ret_for[IB_CM_REQ_RECEIVED] = -EINVAL;
	kunit_warning_suppress(test) {
		fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
		fk_receive(fk, &mad);
		KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 0);
	}
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);	/* the listener */
}

/* The new id a listener hands over is referenced by more than its user. */
static void fk_count_refs(struct fk *fk, struct ib_cm_id *id,
			  const struct ib_cm_event *e)
{
	if (e->event == IB_CM_REQ_RECEIVED ||
	    e->event == IB_CM_SIDR_REQ_RECEIVED)
		fk->seen = refcount_read(&to_priv(id)->refcount);
}

static void handed_over_id_holds_a_reference_of_its_own(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	/*
	 * The consumer's reference may go (another thread destroying the id)
	 * while the hand-over still wakes waiters: the CM holds one more.
	 */
	fk_listen(fk);
	fk->hook = fk_count_refs;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_GE(test, fk->seen, 2);
	fk->seen = 0;
	fk_sidr_req(&mad, FK_PEER_ID, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_GE(test, fk->seen, 2);
}

/* A sharer lets go of its listener inside a new id's callback. */
static void fk_drop_share(struct fk *fk, struct ib_cm_id *id,
			  const struct ib_cm_event *e)
{
	struct ib_cm_id *listen = e->param.req_rcvd.listen_id;

	if (e->event == IB_CM_REQ_RECEIVED && fk->seen++ == 0)
		ib_destroy_cm_id(listen);
}

static void shared_listener_share_dropped_in_a_callback(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *a, *b;
	union cm_kunit_msg mad;

	a = ib_cm_insert_listen(fk->dev, fk_handler, cpu_to_be64(FK_SID));
	b = ib_cm_insert_listen(fk->dev, fk_handler, cpu_to_be64(FK_SID));
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(a));
	KUNIT_ASSERT_PTR_EQ(test, a, b);
	KUNIT_EXPECT_EQ(test, to_priv(a)->listen_sharecount, 2);
	fk->hook = fk_drop_share;
	kunit_warning_suppress(test) {
		fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
		fk_receive(fk, &mad);
		KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 0);
	}
	/* The share is dropped at once; the listener lives on for the other. */
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, to_priv(a)->listen_sharecount, 1);
	KUNIT_EXPECT_EQ(test, a->state, IB_CM_LISTEN);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	fk_destroy(fk, a);
}

struct fk_enomem_case {
	const char *desc;
	enum ib_cm_event_type on;	/* the event the handler fails */
	bool mra_first;			/* ib_prepare_cm_mra() before failing */
	enum ib_cm_state state;		/* the state it fails in */
	bool rej;			/* a REJ goes out */
};

static const struct fk_enomem_case fk_enomem_cases[] = {
	{ "REQ_RCVD: silent, the peer retries", IB_CM_REQ_RECEIVED, false,
	  IB_CM_REQ_RCVD, false },
	{ "MRA_REQ_SENT: rejected", IB_CM_REQ_RECEIVED, true,
	  IB_CM_MRA_REQ_SENT, true },
	{ "REP_RCVD: rejected", IB_CM_REP_RECEIVED, false, IB_CM_REP_RCVD,
	  true },
	{ "MRA_REP_SENT: rejected", IB_CM_REP_RECEIVED, true,
	  IB_CM_MRA_REP_SENT, true },
};

static void fk_enomem_desc(const struct fk_enomem_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_enomem, fk_enomem_cases, fk_enomem_desc);

static void fk_mra_then_fail(struct fk *fk, struct ib_cm_id *id,
			     const struct ib_cm_event *e)
{
	fk->seen = ib_prepare_cm_mra(id);
}

/* -ENOMEM keeps the peer's REQ unanswered only while nothing else went out. */
static void enomem_rejects_past_the_req(struct kunit *test)
{
	const struct fk_enomem_case *c = test->param_value;
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	unsigned int sent;

	if (c->mra_first)
		fk->hook = fk_mra_then_fail;
	fk->ret_for[c->on] = -ENOMEM;
	if (c->on == IB_CM_REQ_RECEIVED) {
		fk_listen(fk);
		sent = fk->nsent;
		fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	} else {
		struct ib_cm_id *id = fk_active_req_sent(fk);

		sent = fk->nsent;
		fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	}
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, c->on);
	fk_disown(fk, fk_last_event(fk)->id);
	/* ib_prepare_cm_mra() took the id to c->state first. */
	KUNIT_EXPECT_EQ(test, fk->seen, 0);
	if (c->rej) {
		FK_EXPECT_SENT(fk, sent + 1, CM_REJ_ATTR_ID);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
				(u64)IB_CM_REJ_CONSUMER_DEFINED);
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
				c->state == IB_CM_MRA_REQ_SENT ?
				(u64)CM_MSG_RESPONSE_REQ :
				(u64)CM_MSG_RESPONSE_REP);
	} else {
		FK_EXPECT_SENT(fk, sent, 0);
	}
}

/* The MAD layer never completes the REQ: destroy still returns, id gone. */
static void destroy_does_not_wait_for_a_lost_completion(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	struct fk_msg *req = fk_tracked(fk);

	KUNIT_ASSERT_NOT_NULL(test, req);
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
	fk_flush();
	/* The REQ is still outstanding; the id let go of it. */
	KUNIT_EXPECT_TRUE(test, req->cancelled);
	KUNIT_EXPECT_NULL(test, req->buf.context[0]);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
	/* Its completion, whenever it comes, frees only the buffer. */
	fk_complete(fk, req, IB_WC_WR_FLUSH_ERR);
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
}

static void no_event_after_destroy_returns(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	u32 local = fk_local(id);
	union cm_kunit_msg mad;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 3, CM_DREQ_ATTR_ID);
	/* The DREP and a DREQ from the peer reach no handler. */
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, FK_PEER_ID);
	fk_receive(fk, &mad);
	fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	/* The late DREQ was still answered. */
	FK_EXPECT_SENT(fk, 4, CM_DREP_ATTR_ID);
}

static void listener_destroy_leaves_new_ids_alone(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	fk_destroy(fk, listen);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REQ_RCVD);
	KUNIT_EXPECT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_SENT);
}

static struct kunit_case fk_contract_cases[] = {
	KUNIT_CASE(nonzero_return_from_req_destroys_the_new_id),
	KUNIT_CASE(enomem_from_req_destroys_without_rej),
	KUNIT_CASE(nonzero_return_from_sidr_req_destroys_the_new_id),
	KUNIT_CASE(nonzero_return_from_rep_rejects_and_destroys),
	KUNIT_CASE(nonzero_return_from_dreq_answers_and_destroys),
	KUNIT_CASE(handler_swapped_in_req_callback_gets_the_rest),
	KUNIT_CASE(context_changed_between_events_is_seen),
	KUNIT_CASE(destroy_from_own_callback_is_deferred),
	KUNIT_CASE(destroy_in_callback_and_nonzero_return_destroy_once),
	KUNIT_CASE(handed_over_id_holds_a_reference_of_its_own),
	KUNIT_CASE(shared_listener_share_dropped_in_a_callback),
	KUNIT_CASE_PARAM(enomem_rejects_past_the_req, fk_enomem_gen_params),
	KUNIT_CASE(no_event_after_destroy_returns),
	KUNIT_CASE(destroy_does_not_wait_for_a_lost_completion),
	KUNIT_CASE(listener_destroy_leaves_new_ids_alone),
	{}
};

static struct kunit_suite fk_contract_suite = {
	.name = "ib_cm_contract",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_contract_cases,
};

/* ---------------------------------------------------------------------
 * Every state: destroyed, and timed out
 */

static struct ib_cm_id *fk_reach(struct fk *fk, enum ib_cm_state state)
{
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	switch (state) {
	case IB_CM_IDLE:
		return fk_new_id(fk);
	case IB_CM_LISTEN:
		return fk_listen(fk);
	case IB_CM_REQ_SENT:
		return fk_active_req_sent(fk);
	case IB_CM_REQ_RCVD:
		return fk_passive_req_rcvd(fk);
	case IB_CM_MRA_REQ_SENT:
		id = fk_passive_req_rcvd(fk);
		KUNIT_ASSERT_EQ(fk->test, ib_prepare_cm_mra(id), 0);
		return id;
	case IB_CM_MRA_REQ_RCVD:
		id = fk_active_req_sent(fk);
		fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ, 20);
		fk_receive(fk, &mad);
		return id;
	case IB_CM_REP_SENT:
		return fk_passive_rep_sent(fk);
	case IB_CM_MRA_REP_RCVD:
		id = fk_passive_rep_sent(fk);
		fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP, 20);
		fk_receive(fk, &mad);
		return id;
	case IB_CM_REP_RCVD:
		return fk_active_rep_rcvd(fk);
	case IB_CM_MRA_REP_SENT:
		id = fk_active_rep_rcvd(fk);
		KUNIT_ASSERT_EQ(fk->test, ib_prepare_cm_mra(id), 0);
		return id;
	case IB_CM_ESTABLISHED:
		return fk_active_established(fk);
	case IB_CM_DREQ_SENT:
		id = fk_active_established(fk);
		KUNIT_ASSERT_EQ(fk->test, ib_send_cm_dreq(id, NULL, 0), 0);
		fk_settle(fk);
		return id;
	case IB_CM_DREQ_RCVD:
		id = fk_active_established(fk);
		fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		return id;
	case IB_CM_TIMEWAIT:
		id = fk_active_established(fk);
		fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		KUNIT_ASSERT_EQ(fk->test, ib_send_cm_drep(id, NULL, 0), 0);
		fk_settle(fk);
		return id;
	case IB_CM_SIDR_REQ_SENT:
		id = fk_new_id(fk);
		KUNIT_ASSERT_EQ(fk->test, fk_send_sidr_req(id), 0);
		return id;
	case IB_CM_SIDR_REQ_RCVD:
		fk_listen(fk);
		fk_sidr_req(&mad, 0x55, FK_SID);
		fk_receive(fk, &mad);
		KUNIT_ASSERT_EQ(fk->test, fk->nevents, 1U);
		return fk_last_event(fk)->id;
	}
	return NULL;
}

struct fk_destroy_case {
	enum ib_cm_state state;
	__be16 sends;		/* attribute of what destroy sends, or 0 */
	u16 rej_reason;		/* for a REJ */
	u8 sidr_status;		/* for a SIDR_REP */
	bool timewait;		/* the id lingers in timewait */
	bool anonymous;		/* REJ of a REQ: local comm ID 0, as stock */
	bool retried;		/* its DREQ is retried until the DREP */
};

static const struct fk_destroy_case fk_destroy_cases[] = {
	{ IB_CM_IDLE, 0 },
	{ IB_CM_LISTEN, 0 },
	{ IB_CM_REQ_SENT, CM_REJ_ATTR_ID, IB_CM_REJ_TIMEOUT },
	{ IB_CM_MRA_REQ_RCVD, CM_REJ_ATTR_ID, IB_CM_REJ_TIMEOUT },
	{ IB_CM_REQ_RCVD, CM_REJ_ATTR_ID, IB_CM_REJ_CONSUMER_DEFINED, 0, false, true },
	{ IB_CM_MRA_REQ_SENT, CM_REJ_ATTR_ID, IB_CM_REJ_CONSUMER_DEFINED },
	{ IB_CM_REP_SENT, CM_REJ_ATTR_ID, IB_CM_REJ_CONSUMER_DEFINED, 0, true },
	{ IB_CM_MRA_REP_RCVD, CM_REJ_ATTR_ID, IB_CM_REJ_CONSUMER_DEFINED, 0, true },
	{ IB_CM_REP_RCVD, CM_REJ_ATTR_ID, IB_CM_REJ_CONSUMER_DEFINED },
	{ IB_CM_MRA_REP_SENT, CM_REJ_ATTR_ID, IB_CM_REJ_CONSUMER_DEFINED },
	{ IB_CM_ESTABLISHED, CM_DREQ_ATTR_ID, 0, 0, true, false, true },
	{ IB_CM_DREQ_SENT, 0, 0, 0, true, false, true },
	{ IB_CM_DREQ_RCVD, CM_DREP_ATTR_ID, 0, 0, true },
	{ IB_CM_TIMEWAIT, 0, 0, 0, true },
	{ IB_CM_SIDR_REQ_SENT, 0 },
	{ IB_CM_SIDR_REQ_RCVD, CM_SIDR_REP_ATTR_ID, 0, IB_SIDR_REJECT },
};

static void fk_destroy_desc(const struct fk_destroy_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_destroy, fk_destroy_cases, fk_destroy_desc);

static void destroy_tells_the_peer_what_it_needs(struct kunit *test)
{
	const struct fk_destroy_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int sent, events, ids;
	__be32 remote;
	u32 local;

	KUNIT_ASSERT_NOT_NULL(test, id);
	KUNIT_ASSERT_EQ(test, id->state, c->state);
	local = fk_local(id);
	remote = id->remote_id;
	sent = fk->nsent;
	events = fk->nevents;
	ids = fk_ids_on_device(fk);

	fk_destroy(fk, id);
	if (c->sends) {
		FK_EXPECT_SENT(fk, sent + 1, c->sends);
		if (c->sends == CM_REJ_ATTR_ID)
			KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
					(u64)c->rej_reason);
		if (c->sends == CM_SIDR_REP_ATTR_ID)
			KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_STATUS, FK_LAST(fk, sidr_rep)),
					(u64)c->sidr_status);
		if (c->sends != CM_SIDR_REP_ATTR_ID)
			KUNIT_EXPECT_EQ(test, fk_sent_local_id(fk_last(fk)),
					c->anonymous ? 0U : local);
	} else {
		FK_EXPECT_SENT(fk, sent, 0);
	}
	if (c->retried) {
		union cm_kunit_msg mad;

		/* Only the DREQ is retried for a destroyed id, until... */
		KUNIT_EXPECT_NOT_NULL(test, fk_tracked(fk));
		fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, be32_to_cpu(remote));
		fk_receive(fk, &mad);
	}
	/* Nothing is retried for a destroyed id... */
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	/* ...it is gone, a small record waiting out timewait instead... */
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records),
			c->timewait ? 1 : 0);
	KUNIT_EXPECT_EQ(test, cm_is_timewait_record(cpu_to_be32(local), remote),
			c->timewait);
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 0);
	/* ...and its handler hears nothing more, timewait's end included. */
	KUNIT_EXPECT_EQ(test, fk->nevents, events);
}

struct fk_timeout_case {
	enum ib_cm_state state;
	enum ib_cm_event_type event;
	enum ib_cm_state after;
};

static const struct fk_timeout_case fk_timeout_cases[] = {
	{ IB_CM_REQ_SENT, IB_CM_REQ_ERROR, IB_CM_IDLE },
	{ IB_CM_MRA_REQ_RCVD, IB_CM_REQ_ERROR, IB_CM_IDLE },
	{ IB_CM_REP_SENT, IB_CM_REP_ERROR, IB_CM_IDLE },
	{ IB_CM_MRA_REP_RCVD, IB_CM_REP_ERROR, IB_CM_IDLE },
	{ IB_CM_DREQ_SENT, IB_CM_DREQ_ERROR, IB_CM_TIMEWAIT },
	{ IB_CM_SIDR_REQ_SENT, IB_CM_SIDR_REQ_ERROR, IB_CM_IDLE },
};

static void fk_timeout_desc(const struct fk_timeout_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_timeout, fk_timeout_cases, fk_timeout_desc);

static void waiting_state_times_out_with_its_error(struct kunit *test)
{
	const struct fk_timeout_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int events;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, events + 1, c->event);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status,
			(int)IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

/* States that wait for the consumer or the peer without a timer. */
static const enum ib_cm_state fk_untimed_states[] = {
	IB_CM_IDLE, IB_CM_LISTEN, IB_CM_REQ_RCVD, IB_CM_MRA_REQ_SENT,
	IB_CM_REP_RCVD, IB_CM_MRA_REP_SENT, IB_CM_ESTABLISHED,
	IB_CM_DREQ_RCVD,
};

KUNIT_ARRAY_PARAM(fk_untimed, fk_untimed_states, cm_kunit_state_desc);

static void consumer_states_have_nothing_to_time_out(struct kunit *test)
{
	const enum ib_cm_state *s = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, *s);

	KUNIT_ASSERT_EQ(test, id->state, *s);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, id->state, *s);
}

struct fk_rx_case {
	enum ib_cm_state state;
	u16 reason;		/* REJ only */
	bool delivered;		/* the handler hears of it */
	enum ib_cm_state after;
};

static void fk_rx_desc(const struct fk_rx_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s%s", cm_state_names[c->state],
		 c->reason == IB_CM_REJ_STALE_CONN ? " stale" : "");
}

static const struct fk_rx_case fk_rej_cases[] = {
	{ IB_CM_REQ_SENT, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_IDLE },
	{ IB_CM_REQ_SENT, IB_CM_REJ_STALE_CONN, true, IB_CM_TIMEWAIT },
	{ IB_CM_MRA_REQ_RCVD, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_IDLE },
	{ IB_CM_MRA_REQ_RCVD, IB_CM_REJ_STALE_CONN, true, IB_CM_TIMEWAIT },
	{ IB_CM_MRA_REQ_SENT, IB_CM_REJ_STALE_CONN, true, IB_CM_TIMEWAIT },
	{ IB_CM_MRA_REP_RCVD, IB_CM_REJ_STALE_CONN, true, IB_CM_TIMEWAIT },
	{ IB_CM_REQ_RCVD, IB_CM_REJ_TIMEOUT, true, IB_CM_IDLE },
	{ IB_CM_MRA_REQ_SENT, IB_CM_REJ_TIMEOUT, true, IB_CM_IDLE },
	{ IB_CM_REP_SENT, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_IDLE },
	{ IB_CM_REP_SENT, IB_CM_REJ_STALE_CONN, true, IB_CM_TIMEWAIT },
	{ IB_CM_REQ_RCVD, IB_CM_REJ_STALE_CONN, true, IB_CM_TIMEWAIT },
	{ IB_CM_MRA_REP_RCVD, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_IDLE },
	{ IB_CM_REP_RCVD, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_TIMEWAIT },
	{ IB_CM_MRA_REP_SENT, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_TIMEWAIT },
	{ IB_CM_ESTABLISHED, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_TIMEWAIT },
	{ IB_CM_DREQ_SENT, IB_CM_REJ_CONSUMER_DEFINED, true, IB_CM_TIMEWAIT },
	{ IB_CM_DREQ_RCVD, IB_CM_REJ_CONSUMER_DEFINED, false, IB_CM_DREQ_RCVD },
	{ IB_CM_TIMEWAIT, IB_CM_REJ_CONSUMER_DEFINED, false, IB_CM_TIMEWAIT },
};

KUNIT_ARRAY_PARAM(fk_rej, fk_rej_cases, fk_rx_desc);

/* A REJ in every state: idle, timewait, or ignored. */
static void rej_received_in_each_state(struct kunit *test)
{
	const struct fk_rx_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	__be64 guid = cpu_to_be64(FK_PEER_GUID);
	unsigned int events;
	union cm_kunit_msg mad;
	u8 rejected;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	switch (c->state) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
		rejected = CM_MSG_RESPONSE_REQ;
		break;
	case IB_CM_REP_SENT:
	case IB_CM_MRA_REP_RCVD:
		rejected = CM_MSG_RESPONSE_REP;
		break;
	default:
		rejected = CM_MSG_RESPONSE_OTHER;
		break;
	}
	fk_rej(&mad, fk_local(id), FK_PEER_ID, rejected, c->reason);
	if (c->reason == IB_CM_REJ_TIMEOUT) {
		/* A timed-out active side names itself by its GUID. */
		IBA_SET(CM_REJ_REMOTE_COMM_ID, &mad.rej, 0);
		IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad.rej, sizeof(guid));
		memcpy(IBA_GET_MEM_PTR(CM_REJ_ARI, &mad.rej), &guid, sizeof(guid));
	}
	fk_receive(fk, &mad);
	if (c->delivered) {
		FK_EXPECT_EVENT(fk, events + 1, IB_CM_REJ_RECEIVED);
		KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason, (int)c->reason);
	} else {
		FK_EXPECT_EVENT(fk, events, FK_ANY);
	}
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

struct fk_dreq_case {
	enum ib_cm_state state;
	enum ib_cm_state after;
	__be16 answer;		/* what goes out at once, or 0 */
	bool delivered;
	bool duplicate;
};

static const struct fk_dreq_case fk_dreq_cases[] = {
	/* Our REQ is unanswered: the DREQ names no connection we know. */
	{ IB_CM_REQ_SENT, IB_CM_REQ_SENT, CM_DREP_ATTR_ID, false, true },
	{ IB_CM_REP_RCVD, IB_CM_REP_RCVD },
	{ IB_CM_REP_SENT, IB_CM_DREQ_RCVD, 0, true },
	{ IB_CM_MRA_REP_RCVD, IB_CM_DREQ_RCVD, 0, true },
	{ IB_CM_ESTABLISHED, IB_CM_DREQ_RCVD, 0, true },
	{ IB_CM_DREQ_SENT, IB_CM_DREQ_RCVD, 0, true },
	{ IB_CM_DREQ_RCVD, IB_CM_DREQ_RCVD, 0, false, true },
	{ IB_CM_TIMEWAIT, IB_CM_TIMEWAIT, CM_DREP_ATTR_ID, false, true },
};

static void fk_dreq_desc(const struct fk_dreq_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_dreq, fk_dreq_cases, fk_dreq_desc);

/* A DREQ in every state that has a peer to send one. */
static void dreq_received_in_each_state(struct kunit *test)
{
	const struct fk_dreq_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int events, sent;
	long dups;
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	sent = fk->nsent;
	dups = fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, events + c->delivered,
			c->delivered ? IB_CM_DREQ_RECEIVED : FK_ANY);
	FK_EXPECT_SENT(fk, sent + !!c->answer, c->answer);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID),
			dups + c->duplicate);
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	/* An answered DREQ leaves nothing to retry. */
	if (c->delivered)
		KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

struct fk_user_rej_case {
	enum ib_cm_state state;
	u8 rejected;		/* MESSAGE_REJECTED of the REJ */
	enum ib_cm_state after;
};

static const struct fk_user_rej_case fk_user_rej_cases[] = {
	{ IB_CM_REQ_SENT, CM_MSG_RESPONSE_OTHER, IB_CM_IDLE },
	{ IB_CM_MRA_REQ_RCVD, CM_MSG_RESPONSE_OTHER, IB_CM_IDLE },
	{ IB_CM_REQ_RCVD, CM_MSG_RESPONSE_REQ, IB_CM_IDLE },
	{ IB_CM_MRA_REQ_SENT, CM_MSG_RESPONSE_REQ, IB_CM_IDLE },
	{ IB_CM_REP_RCVD, CM_MSG_RESPONSE_REP, IB_CM_IDLE },
	{ IB_CM_MRA_REP_SENT, CM_MSG_RESPONSE_REP, IB_CM_IDLE },
	{ IB_CM_REP_SENT, CM_MSG_RESPONSE_OTHER, IB_CM_TIMEWAIT },
	{ IB_CM_MRA_REP_RCVD, CM_MSG_RESPONSE_OTHER, IB_CM_TIMEWAIT },
};

static void fk_user_rej_desc(const struct fk_user_rej_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_user_rej, fk_user_rej_cases, fk_user_rej_desc);

/* ib_send_cm_rej() in every state that allows it. */
static void user_rej_in_each_state(struct kunit *test)
{
	const struct fk_user_rej_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int events, sent;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	sent = fk->nsent;
	KUNIT_ASSERT_EQ(test, ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED,
					     NULL, 0, fk_pdata, 8), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, sent + 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
			(u64)c->rejected);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, memcmp(IBA_GET_MEM_PTR(CM_REJ_PRIVATE_DATA, FK_LAST(fk, rej)),
				     fk_pdata, 8), 0);
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	FK_EXPECT_EVENT(fk, events, FK_ANY);
}

static void drep_after_crossed_dreqs_ends_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, IB_CM_DREQ_SENT);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_DREQ_RCVD);
	/* The peer answers our DREQ before we answer its own. */
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_DREP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
}

static void prepared_mra_answers_a_repeated_lap(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->lap_state, IB_CM_LAP_RCVD);
	KUNIT_ASSERT_EQ(test, ib_prepare_cm_mra(id), 0);
	KUNIT_EXPECT_EQ(test, id->lap_state, IB_CM_MRA_LAP_SENT);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_MRA_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_MESSAGE_MRAED, FK_LAST(fk, mra)),
			(u64)CM_MSG_RESPONSE_OTHER);
	FK_EXPECT_EVENT(fk, 2, IB_CM_LAP_RECEIVED);
	/* While the LAP is pending, path migration is refused. */
	KUNIT_EXPECT_NE(test, ib_cm_notify(id, IB_EVENT_PATH_MIG), 0);
}

static void comm_est_after_an_mra_for_the_rep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, IB_CM_MRA_REP_RCVD);

	KUNIT_ASSERT_EQ(test, id->state, IB_CM_MRA_REP_RCVD);
	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_USER_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

static void dreq_that_cannot_be_posted_goes_to_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	fk->post_ret = -ENOMEM;
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), -ENOMEM);
	fk->post_ret = 0;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	FK_EXPECT_SENT(fk, 2, CM_RTU_ATTR_ID);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_TIMEWAIT_EXIT);
}

static void req_that_cannot_be_posted_leaves_the_id_idle(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);

	fk->post_ret = -EAGAIN;
	KUNIT_EXPECT_EQ(test, fk_send_req(id), -EAGAIN);
	fk->post_ret = 0;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_send_req(id), 0);
}

static void unroutable_req_and_sidr_req_are_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->wc_ret = -EHOSTUNREACH;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	fk_sidr_req(&mad, 0x31, FK_SID);
	fk_receive(fk, &mad);
	fk->wc_ret = 0;
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), 2L);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	KUNIT_EXPECT_EQ(test, fk->rx_freed, 2U);
}

static void xrc_target_is_destroyed_without_dreq(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, &mad.req, CM_REQ_TRANSPORT_EXTENDED);
	IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, &mad.req, CM_REQ_EXT_TRANSPORT_XRC);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	/* An XRC target's QPN travels in the EECN field, with an SRQ. */
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_EE_CONTEXT_NUMBER, FK_LAST(fk, rep)),
			(u64)FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_SRQ, FK_LAST(fk, rep)), 1ULL);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_ESTABLISHED);
	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
}

static void timewait_ends_in_idle_with_an_event(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, IB_CM_TIMEWAIT);
	unsigned int events = fk->nevents;

	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_TIMEWAIT_EXIT);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	/* The id may connect again. */
	KUNIT_EXPECT_EQ(test, fk_send_req(id), 0);
}

static void send_error_other_than_timeout_is_reported(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	struct fk_msg *m;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	m = fk_tracked(fk);
	KUNIT_ASSERT_NOT_NULL(test, m);
	/* A transport error other than a timeout is reported the same way. */
	fk_complete(fk, m, IB_WC_GENERAL_ERR);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_ERROR);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status, (int)IB_WC_GENERAL_ERR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
}

static struct kunit_case fk_state_cases[] = {
	KUNIT_CASE_PARAM(destroy_retries_the_dreq_until_it_is_answered,
			 fk_dreq_end_gen_params),
	KUNIT_CASE_PARAM(destroy_tells_the_peer_what_it_needs,
			 fk_destroy_gen_params),
	KUNIT_CASE_PARAM(waiting_state_times_out_with_its_error,
			 fk_timeout_gen_params),
	KUNIT_CASE_PARAM(consumer_states_have_nothing_to_time_out,
			 fk_untimed_gen_params),
	KUNIT_CASE_PARAM(rej_received_in_each_state, fk_rej_gen_params),
	KUNIT_CASE_PARAM(dreq_received_in_each_state, fk_dreq_gen_params),
	KUNIT_CASE_PARAM(user_rej_in_each_state, fk_user_rej_gen_params),
	KUNIT_CASE(drep_after_crossed_dreqs_ends_in_timewait),
	KUNIT_CASE(prepared_mra_answers_a_repeated_lap),
	KUNIT_CASE(comm_est_after_an_mra_for_the_rep),
	KUNIT_CASE(dreq_that_cannot_be_posted_goes_to_timewait),
	KUNIT_CASE(req_that_cannot_be_posted_leaves_the_id_idle),
	KUNIT_CASE(unroutable_req_and_sidr_req_are_dropped),
	KUNIT_CASE(xrc_target_is_destroyed_without_dreq),
	KUNIT_CASE(timewait_ends_in_idle_with_an_event),
	KUNIT_CASE(send_error_other_than_timeout_is_reported),
	{}
};

/* ---- floods: the backlog of received MADs is bounded ---- */

/* The listener's handler takes its time: until the test releases it. */
static void fk_hold_in_handler(struct fk *fk, struct ib_cm_id *id,
			       const struct ib_cm_event *e)
{
	/* The CM destroys the id after this (the handler returns 1). */
	fk_disown(fk, id);
	atomic_inc(&fk->held);
	wait_for_completion(&fk->release);
}

/* Wait (at most 30 s) until @n handlers are held up. */
static void fk_wait_held(struct fk *fk, int n)
{
	unsigned int ms;

	for (ms = 0; atomic_read(&fk->held) < n && ms < 30000; ms += 20)
		msleep(20);
	KUNIT_EXPECT_GE(fk->test, atomic_read(&fk->held), n);
}

/*
 * A REQ flood at a listener whose handler is slow: CM_ID_BACKLOG REQs wait,
 * the rest are dropped and counted, and each of those is only a drop.
 */
static void req_flood_at_a_slow_listener_is_bounded(struct kunit *test)
{
	struct fk *fk = test->priv;
	unsigned int flood = CM_ID_BACKLOG + 100, i;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->hook = fk_hold_in_handler;
	fk->ret_for[IB_CM_REQ_RECEIVED] = 1;	/* the CM destroys each */
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_held(fk, 1);
	/* The handler is busy with the first: the rest wait or are dropped. */
	for (i = 1; i <= flood; i++) {
		fk_req(&mad, FK_PEER_ID + i, FK_PEER_QPN + i, FK_SID);
		fk_inject(fk, &mad, NULL);
	}
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG),
			(long)(flood - CM_ID_BACKLOG));
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog),
			CM_ID_BACKLOG + 1);
	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/* Each REQ that waited was handed over (and rejected, as returned). */
	KUNIT_EXPECT_EQ(test, fk->hook_calls, CM_ID_BACKLOG + 1U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);	/* the listener */
}

/* Many listeners flooded at once: the port's bound holds for them all. */
static void flood_of_many_listeners_is_bounded_per_port(struct kunit *test)
{
	unsigned int nlisten = CM_PORT_BACKLOG / CM_ID_BACKLOG + 1;
	struct fk *fk = test->priv;
	struct ib_cm_id **listen;
	union cm_kunit_msg mad;
	unsigned int l, i;
	u32 peer = FK_PEER_ID;

	listen = kunit_kcalloc(test, nlisten, sizeof(*listen), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, listen);
	fk->hook = fk_hold_in_handler;
	fk->ret_for[IB_CM_REQ_RECEIVED] = 1;
	for (l = 0; l < nlisten; l++) {
		listen[l] = fk_new_id(fk);
		KUNIT_ASSERT_EQ(test, ib_cm_listen(listen[l],
						   cpu_to_be64(FK_SID + l)), 0);
	}
	/* One REQ for each listener in turn, more than the port takes. */
	for (i = 0; i < CM_ID_BACKLOG; i++)
		for (l = 0; l < nlisten; l++) {
			fk_req(&mad, peer, FK_PEER_QPN + (peer - FK_PEER_ID),
			       FK_SID + l);
			peer++;
			fk_inject(fk, &mad, NULL);
			if (!i)
				fk_wait_held(fk, l + 1);
		}
	/* Every listener's first REQ is in its handler, the rest waits. */
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog),
			CM_PORT_BACKLOG);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG),
			(long)(nlisten * CM_ID_BACKLOG - CM_PORT_BACKLOG));
	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), nlisten);
}

/*
 * Messages for nobody are answered off the receive path.  While making an
 * answer is held up (on RoCE, a peer whose address does not resolve),
 * CM_ANSWER_BACKLOG more wait, the rest are dropped and counted, and a REQ
 * for a listener still reaches it.
 */
static void answers_held_up_hold_up_nothing_else(struct kunit *test)
{
	unsigned int flood = CM_ANSWER_BACKLOG + 10, i, ms;
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->hold_answers = true;
	/* REQs for a service nobody listens for, each to be rejected. */
	for (i = 0; i <= flood; i++) {
		fk_req(&mad, FK_PEER_ID + i, FK_PEER_QPN + i, FK_SID + 1);
		fk_inject(fk, &mad, NULL);
		if (!i)
			fk_wait_held(fk, 1);
	}
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG), 10L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog),
			CM_ANSWER_BACKLOG + 1);

	fk_req(&mad, FK_PEER_ID + flood + 1, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	for (ms = 0; !READ_ONCE(fk->nevents) && ms < 30000; ms += 20)
		msleep(20);
	KUNIT_EXPECT_EQ(test, READ_ONCE(fk->nevents), 1U);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->nsent, 0U);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/*
	 * Every REQ that waited got its REJ, unless it waited too long (see
	 * the next test): then it is one more drop.
	 */
	KUNIT_EXPECT_EQ(test, fk->nsent + fk_drops(fk, CM_DROP_BACKLOG) - 10,
			CM_ANSWER_BACKLOG + 1U);
	KUNIT_EXPECT_GE(test, fk->nsent, 1U);
	KUNIT_EXPECT_EQ(test, fk->sent[0].attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, &fk->sent[0].mad.rej),
			IB_CM_REJ_INVALID_SERVICE_ID);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/*
 * An answer that waited CM_ANSWER_MAX_AGE is dropped and counted: behind
 * answers that take a second each, a flood drains at once.
 */
static void answers_that_waited_too_long_are_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	unsigned int i;

	fk->hold_answers = true;
	for (i = 0; i < 5; i++) {
		fk_req(&mad, FK_PEER_ID + i, FK_PEER_QPN + i, FK_SID);
		fk_inject(fk, &mad, NULL);
		if (!i)
			fk_wait_held(fk, 1);
	}
	msleep(jiffies_to_msecs(CM_ANSWER_MAX_AGE) + 100);
	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/* The one being made when they waited is sent. */
	KUNIT_EXPECT_EQ(test, fk->nsent, 1U);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG), 4L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

static struct kunit_case fk_flood_cases[] = {
	KUNIT_CASE_SLOW(req_flood_at_a_slow_listener_is_bounded),
	KUNIT_CASE_SLOW(flood_of_many_listeners_is_bounded_per_port),
	KUNIT_CASE_SLOW(answers_held_up_hold_up_nothing_else),
	KUNIT_CASE_SLOW(answers_that_waited_too_long_are_dropped),
	{}
};

static struct kunit_suite fk_flood_suite = {
	.name = "ib_cm_floods",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_flood_cases,
};

static struct kunit_suite fk_state_suite = {
	.name = "ib_cm_states",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_state_cases,
};

#undef CREATE_TRACE_POINTS
#include <trace/events/kmem.h>

/* ---------------------------------------------------------------------
 * Arrival order
 *
 * A received MAD finds its id when it comes in, while the inputs before
 * it may still wait on a queue.  Each case holds a queue (as a busy
 * worker would), lets MADs arrive behind an input that changes what they
 * are for, then lets the queue run: the outcome must be the one of
 * processing them in order.
 */

/* A REJ TIMEOUT from the peer: our comm ID @ours (0: never told). */
static void fk_rej_timeout(union cm_kunit_msg *mad, u32 ours, u32 peer)
{
	__be64 guid = cpu_to_be64(FK_PEER_GUID);

	fk_rej(mad, ours, peer, CM_MSG_RESPONSE_OTHER, IB_CM_REJ_TIMEOUT);
	IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad->rej, sizeof(guid));
	memcpy(IBA_GET_MEM_PTR(CM_REJ_ARI, &mad->rej), &guid, sizeof(guid));
}

/* The peer sends its REP and destroys its id at once: REP, then REJ. */
static void rej_right_behind_a_rep_follows_it(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_hold(id);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_inject(fk, &mad, NULL);
	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, id);

	FK_EXPECT_EVENT(fk, 2, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 0L);
}

/* Checked once the REP has been taken: a stranger's REJ is dropped. */
static void strangers_rej_behind_a_rep_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_hold(id);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_inject(fk, &mad, NULL);
	fk_rej(&mad, fk_local(id), FK_PEER_ID + 7, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, id);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 1L);
}

/*
 * The initiator of a REQ that still waits on a slow listener gives up:
 * its REJ TIMEOUT must reach the id that the REQ makes.
 */
static void rej_timeout_behind_its_req_reaches_the_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	union cm_kunit_msg mad;

	fk_hold(listen);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_rej_timeout(&mad, 0, FK_PEER_ID);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, listen);

	FK_EXPECT_EVENT(fk, 2, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk->events[1].id, fk->events[0].id);
	KUNIT_EXPECT_EQ(test, fk->events[1].reason, (int)IB_CM_REJ_TIMEOUT);
	KUNIT_EXPECT_EQ(test, fk->events[0].id->state, IB_CM_IDLE);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 0L);
}

/* A REQ that goes nowhere takes the REJ TIMEOUT behind it along. */
static void rej_timeout_behind_a_refused_req_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	union cm_kunit_msg mad;

	fk->ret_for[IB_CM_REQ_RECEIVED] = -ECONNREFUSED;
	fk_hold(listen);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_rej_timeout(&mad, 0, FK_PEER_ID);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, listen);

	/*
	 * Our REJ of the REQ; the peer's REJ reaches the refused id, which
	 * has nothing to say to it.
	 */
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	fk_disown(fk, fk->events[0].id);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/*
 * ib_srpt calls ib_cm_notify(COMM_EST) when the RTU was lost; a DREQ
 * that came first leaves ESTABLISHED, and the late event is not given.
 */
static void user_established_after_a_dreq_is_not_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg mad;

	fk_hold(id);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_inject(fk, &mad, NULL);
	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	fk_let_go(fk, id);

	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
}

/*
 * Across an IB router a REQ names both LIDs as permissive: the path takes
 * our LID's path bits and the SL from the packet that brought it.
 */
static void routed_req_takes_lid_and_sl_from_the_packet(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->rx_sl = 5;
	fk->rx_path_bits = 3;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PRIMARY_SUBNET_LOCAL, &mad.req, 0);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_PORT_LID, &mad.req, 0xffff);
	IBA_SET(CM_REQ_PRIMARY_REMOTE_PORT_LID, &mad.req, 0xffff);
	IBA_SET(CM_REQ_PRIMARY_SL, &mad.req, 1);
	fk_receive(fk, &mad);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_dlid, (u32)FK_PEER_LID);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_slid, 3U);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_sl, 5);
}

/* On one subnet the REQ's own SL and LIDs stand. */
static void local_req_keeps_its_lid_and_sl(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->rx_sl = 5;
	fk->rx_path_bits = 3;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PRIMARY_SL, &mad.req, 1);
	fk_receive(fk, &mad);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_slid, 1U);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_sl, 1);
}

/* The last message sent was resent, carrying fk_pdata at @pdata. */
static void fk_expect_resent_pdata(struct fk *fk, const void *pdata)
{
	KUNIT_EXPECT_TRUE(fk->test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(fk->test, memcmp(pdata, fk_pdata, sizeof(fk_pdata)), 0);
}

/* A repeated REP is answered with the RTU as the consumer sent it. */
static void resent_rtu_keeps_its_private_data(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, fk_pdata, sizeof(fk_pdata)),
			0);
	fk_settle(fk);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_RTU_ATTR_ID);
	fk_expect_resent_pdata(fk, IBA_GET_MEM_PTR(CM_RTU_PRIVATE_DATA,
						   FK_LAST(fk, rtu)));
}

/* A repeated DREQ in timewait gets the DREP as the consumer sent it. */
static void resent_drep_keeps_its_private_data(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, fk_pdata, sizeof(fk_pdata)),
			0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 4, CM_DREP_ATTR_ID);
	fk_expect_resent_pdata(fk, IBA_GET_MEM_PTR(CM_DREP_PRIVATE_DATA,
						   FK_LAST(fk, drep)));
}

/* After a path migration (LAP idle) a stray REJ changes nothing. */
static void rej_after_path_migration_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	struct cm_id_priv *p = to_priv(id);
	union cm_kunit_msg mad;

	spin_lock_irq(&p->lock);
	cm_set_lap_state(p, IB_CM_LAP_IDLE, CM_PATH_MIG);
	spin_unlock_irq(&p->lock);
	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_OTHER,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/*
 * A connection destroyed while established retries its DREQ, but its QP
 * is gone: the peer may reuse its own QPN for a new connection at once.
 */
static void destroyed_connection_frees_the_peers_qpn(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
}

/* Allocations that may sleep, made on the receive path. */
static void fk_count_blocking(void *data, unsigned long call_site,
			      const void *ptr, struct kmem_cache *s,
			      gfp_t gfp, int node)
{
	struct fk *fk = data;

	if (fk->receiving == current && gfpflags_allow_blocking(gfp))
		atomic_inc(&fk->blocking);
}

/*
 * The MAD layer's receive path may not sleep: it alone refills QP1.  No
 * allocation on it may, then (kmem's trace point tells their flags).
 */
static void receive_path_does_not_sleep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test,
			register_trace_kmem_cache_alloc(fk_count_blocking, fk),
			0);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_inject(fk, &mad, NULL);
	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_inject(fk, &mad, NULL);
	unregister_trace_kmem_cache_alloc(fk_count_blocking, fk);
	tracepoint_synchronize_unregister();
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->blocking), 0);
}

/*
 * Hand @mad to the CM from a sender whose address takes until the test
 * releases it (fk->release) to make, and wait until that is where it is.
 */
static void fk_inject_held(struct fk *fk, const union cm_kunit_msg *mad)
{
	fk->hold_slid = FK_PEER_LID + 0x40;
	fk->rx_slid = fk->hold_slid;
	fk_inject(fk, mad, NULL);
	fk_wait_held(fk, 1);
	fk->rx_slid = 0;
}

/* Wait up to 5 s for @n events, and expect them. */
static void fk_wait_events(struct fk *fk, unsigned int n)
{
	unsigned int ms;

	for (ms = 0; READ_ONCE(fk->nevents) < n && ms < 5000; ms += 20)
		msleep(20);
	KUNIT_EXPECT_EQ(fk->test, READ_ONCE(fk->nevents), n);
}

/*
 * Making the address of one REQ's sender may wait (on RoCE, a second for
 * an address that does not resolve): the listener's other REQs go on.
 */
static void slow_address_holds_up_no_other_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject_held(fk, &mad);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_events(fk, 1);
	KUNIT_EXPECT_EQ(test, fk->events[0].qpn, FK_PEER_QPN + 1);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[1].qpn, FK_PEER_QPN);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/*
 * A listener destroyed while a REQ waits on its queue, and another made
 * for the same service: the REQ goes to the new one.
 */
static void req_waiting_on_a_replaced_listener_goes_to_the_new_one(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *old = fk_listen(fk);
	struct ib_cm_id *new;
	union cm_kunit_msg mad;

	fk_hold(old);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_disown(fk, old);
	ib_destroy_cm_id(old);
	new = fk_listen(fk);
	fk_let_go(fk, old);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk->events[0].listen_id, new);
	FK_EXPECT_SENT(fk, 0, 0);
}

/* A REJ of our REQ that comes once we know the peer is not its. */
static void late_rej_of_our_req_leaves_an_established_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID + 7, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 1L);
}

/* A passive connection from @peer's QP @qpn, whose REQ asks for 15 retries. */
static struct ib_cm_id *fk_passive_conn(struct fk *fk, u32 peer, u32 qpn)
{
	union cm_kunit_msg mad;
	struct ib_cm_id *id;

	fk_req(&mad, peer, qpn, FK_SID);
	IBA_SET(CM_REQ_MAX_CM_RETRIES, &mad.req, 15);
	fk_receive(fk, &mad);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(fk->test, fk_send_rep(id), 0);
	fk_settle(fk);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), peer);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_ESTABLISHED);
	return id;
}

static void fk_restore_destroy_window(void *old)
{
	cm_destroy_window = (unsigned long)old;
}

/*
 * A destroyed connection retries its DREQ a few times, and only so many
 * of them at once on a port; past that the DREQ goes out once.
 */
static void destroyed_connections_retry_few_dreqs(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *a, *b;

	KUNIT_ASSERT_EQ(test,
			kunit_add_action(test, fk_restore_destroy_window,
					 (void *)(unsigned long)cm_destroy_window),
			0);
	cm_destroy_window = 1;
	fk_listen(fk);
	a = fk_passive_conn(fk, FK_PEER_ID, FK_PEER_QPN);
	b = fk_passive_conn(fk, FK_PEER_ID + 1, FK_PEER_QPN + 1);

	fk_destroy(fk, a);
	KUNIT_ASSERT_NOT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->buf.retries, 3);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->send_only);
	fk_destroy(fk, b);
	KUNIT_ASSERT_NOT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->buf.retries, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->destroy_dreqs), 1);

	KUNIT_EXPECT_TRUE(test, fk_time_out(fk));
	KUNIT_EXPECT_TRUE(test, fk_time_out(fk));
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->destroy_dreqs), 0);
}

/*
 * Answering a REQ that makes no connection (here a stale one's REJ) may
 * wait for the sender's address too: the listener's other REQs go on.
 */
static void slow_answer_holds_up_no_other_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_established(fk);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_inject_held(fk, &mad);
	fk_req(&mad, FK_PEER_ID + 2, FK_PEER_QPN + 2, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_events(fk, 3);
	KUNIT_EXPECT_EQ(test, fk->events[2].qpn, FK_PEER_QPN + 2);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/* The stale REJ went out in the end. */
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REJ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/* The same for a SIDR_REQ, which shares the listener of rdma_cm's IB space. */
static void slow_sidr_address_holds_up_no_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_sidr_req(&mad, 0x77, FK_SID);
	fk_inject_held(fk, &mad);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_events(fk, 1);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REQ_RECEIVED);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/* A port that goes away drops its waiting answers, counted as backlog. */
static void answers_dropped_at_port_removal_are_counted(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	WRITE_ONCE(fk->port->mad_agent, NULL);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID + 1);
	fk_inject(fk, &mad, NULL);
	fk_flush();
	WRITE_ONCE(fk->port->mad_agent, &fk->agent);
	KUNIT_EXPECT_EQ(test, fk->nsent, 0U);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG), 1L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

static struct kunit_case fk_order_cases[] = {
	KUNIT_CASE(rej_right_behind_a_rep_follows_it),
	KUNIT_CASE(strangers_rej_behind_a_rep_is_dropped),
	KUNIT_CASE(rej_timeout_behind_its_req_reaches_the_new_id),
	KUNIT_CASE(rej_timeout_behind_a_refused_req_is_dropped),
	KUNIT_CASE(user_established_after_a_dreq_is_not_delivered),
	KUNIT_CASE(routed_req_takes_lid_and_sl_from_the_packet),
	KUNIT_CASE(local_req_keeps_its_lid_and_sl),
	KUNIT_CASE(resent_rtu_keeps_its_private_data),
	KUNIT_CASE(resent_drep_keeps_its_private_data),
	KUNIT_CASE(rej_after_path_migration_is_ignored),
	KUNIT_CASE(destroyed_connection_frees_the_peers_qpn),
	KUNIT_CASE(receive_path_does_not_sleep),
	KUNIT_CASE(answers_dropped_at_port_removal_are_counted),
	KUNIT_CASE(req_waiting_on_a_replaced_listener_goes_to_the_new_one),
	KUNIT_CASE(late_rej_of_our_req_leaves_an_established_id),
	KUNIT_CASE(destroyed_connections_retry_few_dreqs),
	KUNIT_CASE_SLOW(slow_address_holds_up_no_other_req),
	KUNIT_CASE_SLOW(slow_answer_holds_up_no_other_req),
	KUNIT_CASE_SLOW(slow_sidr_address_holds_up_no_req),
	{}
};

static struct kunit_suite fk_order_suite = {
	.name = "ib_cm_ordering",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_order_cases,
};

/* ---------------------------------------------------------------------
 * Allocation failures
 *
 * A sweep runs one exchange with the peer again and again, the n-th
 * allocation failing in the n-th run, until a run makes fewer than n:
 * then every allocation the exchange makes has failed once.  That is the
 * CM's own allocations and those of the MAD layer and ib_core it calls
 * (send buffers, address handles: the fake transport's).  failslab fails
 * them, set up through its debugfs attributes: only tasks marked to fail
 * count (the test's own, and a worker while it runs an id's work), and
 * allocations that may sleep are failed too.
 *
 * Each step of the exchange is tried again, as its initiator would (the
 * consumer calls again, the peer resends), until it is done; a try that
 * did not get it done must say so, by an error returned or a drop
 * counted as "nomem".  At the end every id is destroyed, every timewait
 * ended, and nothing of the fake device may be left (fk_clean()); the
 * debug run adds kmemleak and KASAN.
 */

#if IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) && \
	IS_ENABLED(CONFIG_FAILSLAB) && !defined(MODULE)
#define FK_SWEEP 1
#endif

#ifdef FK_SWEEP
#undef CREATE_TRACE_POINTS
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <trace/events/workqueue.h>

/* failslab's settings, and what they were before the sweep. */
static struct {
	struct fault_attr *attr;
	bool *ignore_reclaim;
	unsigned long probability, interval, verbose;
	int times;
	bool task_filter, ignored_reclaim;
} fk_fs;

/* What a debugfs attribute file reads and writes. */
static void *fk_debugfs_value(struct dentry *dir, const char *name)
{
	struct dentry *d = debugfs_lookup(name, dir);
	void *value;

	if (IS_ERR_OR_NULL(d))
		return NULL;
	value = d_inode(d)->i_private;
	dput(d);
	return value;
}

/* A worker running an id's work or the answers fails as the test does. */
static void fk_work_starts(void *data, struct work_struct *work)
{
	if (work->func == cm_id_work || work->func == cm_answer_work)
		current->make_it_fail = 1;
}

static void fk_work_ends(void *data, struct work_struct *work,
			 work_func_t func)
{
	if (func == cm_id_work || func == cm_answer_work)
		current->make_it_fail = 0;
}

static void fk_failslab_restore(void *unused)
{
	struct fault_attr *attr = fk_fs.attr;

	current->make_it_fail = 0;
	unregister_trace_workqueue_execute_end(fk_work_ends, NULL);
	unregister_trace_workqueue_execute_start(fk_work_starts, NULL);
	tracepoint_synchronize_unregister();
	attr->probability = fk_fs.probability;
	attr->interval = fk_fs.interval;
	attr->verbose = fk_fs.verbose;
	attr->task_filter = fk_fs.task_filter;
	atomic_set(&attr->times, fk_fs.times);
	*fk_fs.ignore_reclaim = fk_fs.ignored_reclaim;
}

/* Take failslab over for the test; 0, or why it cannot be. */
static int fk_failslab_take(struct kunit *test)
{
	struct dentry *dir = debugfs_lookup("failslab", NULL);
	unsigned long *probability;
	struct fault_attr *attr;
	int ret;

	if (IS_ERR_OR_NULL(dir))
		return -ENOENT;
	probability = fk_debugfs_value(dir, "probability");
	fk_fs.ignore_reclaim = fk_debugfs_value(dir, "ignore-gfp-wait");
	dput(dir);
	if (!probability || !fk_fs.ignore_reclaim)
		return -ENOENT;
	ret = register_trace_workqueue_execute_start(fk_work_starts, NULL);
	if (ret)
		return ret;
	ret = register_trace_workqueue_execute_end(fk_work_ends, NULL);
	if (ret) {
		unregister_trace_workqueue_execute_start(fk_work_starts, NULL);
		tracepoint_synchronize_unregister();
		return ret;
	}

	/* Changed only now, so that every way out restores them. */
	attr = container_of(probability, struct fault_attr, probability);
	fk_fs.attr = attr;
	fk_fs.probability = attr->probability;
	fk_fs.interval = attr->interval;
	fk_fs.verbose = attr->verbose;
	fk_fs.task_filter = attr->task_filter;
	fk_fs.times = atomic_read(&attr->times);
	fk_fs.ignored_reclaim = *fk_fs.ignore_reclaim;
	atomic_set(&attr->times, 0);
	attr->probability = 100;
	attr->task_filter = true;
	attr->verbose = 0;	/* no stack dumps: the runner looks for them */
	*fk_fs.ignore_reclaim = false;
	return kunit_add_action_or_reset(test, fk_failslab_restore, NULL);
}

/* From now on the @nth allocation of a marked task fails, once. */
static void fk_fail_nth(unsigned int nth)
{
	fk_fs.attr->count = 0;
	fk_fs.attr->interval = nth;
	atomic_set(&fk_fs.attr->times, 1);
	current->make_it_fail = 1;
}

/* Has the failure come? */
static bool fk_failed(void)
{
	return !atomic_read(&fk_fs.attr->times);
}

/* Stop failing; true if the failure came. */
static bool fk_fail_stop(void)
{
	bool failed = fk_failed();

	current->make_it_fail = 0;
	atomic_set(&fk_fs.attr->times, 0);
	return failed;
}
#else
static int fk_failslab_take(struct kunit *test)
{
	return -EOPNOTSUPP;
}

static void fk_fail_nth(unsigned int nth)
{
}

static bool fk_fail_stop(void)
{
	return false;
}

static bool fk_failed(void)
{
	return false;
}
#endif

#define FK_TRIES	3

struct fk_sweep {
	struct fk *fk;
	unsigned int nth;	/* the allocation that fails */
	unsigned int retries;	/* tries that did not get their step done */
};

/*
 * A try of @step did not get it done: it must have said so, by returning
 * @ret or by counting a drop for lack of memory (@nomem drops before).
 */
static void fk_sweep_missed(struct fk_sweep *s, const char *step, int ret,
			    long nomem)
{
	s->retries++;
	KUNIT_EXPECT_TRUE_MSG(s->fk->test,
			      ret || fk_drops(s->fk, CM_DROP_NOMEM) > nomem,
			      "allocation %u failed in \"%s\" with no trace",
			      s->nth, step);
}

/* Try @attempt (an errno) until @done, as its initiator would. */
#define FK_STEP(s, step, attempt, done) do {				\
	struct fk_sweep *__s = (s);					\
	const char *__step = (step);					\
	unsigned int __try;						\
	bool __done = false;						\
									\
	for (__try = 0; __try < FK_TRIES && !__done; __try++) {		\
		long __nomem = fk_drops(__s->fk, CM_DROP_NOMEM);	\
		int __ret = (attempt);					\
									\
		__done = (done);					\
		if (!__done)						\
			fk_sweep_missed(__s, __step, __ret, __nomem);	\
	}								\
	KUNIT_ASSERT_TRUE_MSG(__s->fk->test, __done,			\
			      "\"%s\" not done, allocation %u failing",	\
			      __step, __s->nth);			\
} while (0)

static int fk_sweep_create(struct fk *fk, struct ib_cm_id **idp)
{
	struct ib_cm_id *id = ib_create_cm_id(fk->dev, fk_handler, fk);

	if (IS_ERR(id))
		return PTR_ERR(id);
	spin_lock_irq(&fk->lock);
	fk->owned[fk->nowned++] = id;
	spin_unlock_irq(&fk->lock);
	*idp = id;
	return 0;
}

static int fk_sweep_receive(struct fk *fk, const union cm_kunit_msg *mad)
{
	fk_receive(fk, mad);
	return 0;
}

static int fk_sweep_settle(struct fk *fk, int ret)
{
	fk_settle(fk);
	return ret;
}

/* Messages of attribute @attr sent so far. */
static unsigned int fk_sent_of(struct fk *fk, __be16 attr)
{
	unsigned int i, n = 0;

	for (i = 0; i < min(fk->nsent, FK_SENT_MAX); i++)
		n += fk->sent[i].attr == attr;
	return n;
}

static bool fk_got(struct fk *fk, unsigned int nevents, int type)
{
	return fk->nevents > nevents && fk_last_event(fk)->type == type;
}

static struct ib_cm_id *fk_sweep_listen(struct fk_sweep *s)
{
	struct ib_cm_id *listen = NULL;

	FK_STEP(s, "create", fk_sweep_create(s->fk, &listen), listen);
	FK_STEP(s, "listen", ib_cm_listen(listen, cpu_to_be64(FK_SID)),
		listen->state == IB_CM_LISTEN);
	return listen;
}

/*
 * We connect and destroy the connection: the DREQ that destroy sends is
 * retried until the peer's DREP, unless there was no memory for it; then
 * the id goes to timewait at once, as stock's.
 */
static void fk_sweep_active(struct fk_sweep *s)
{
	struct fk *fk = s->fk;
	struct ib_cm_id *id = NULL;
	union cm_kunit_msg mad;
	bool failed_before;
	u32 local;

	FK_STEP(s, "create", fk_sweep_create(fk, &id), id);
	FK_STEP(s, "REQ", fk_send_req(id), id->state == IB_CM_REQ_SENT);
	local = fk_local(id);
	fk_rep(&mad, local, FK_PEER_ID, FK_PEER_QPN);
	FK_STEP(s, "REP", fk_sweep_receive(fk, &mad),
		id->state == IB_CM_REP_RCVD);
	FK_STEP(s, "RTU", fk_sweep_settle(fk, ib_send_cm_rtu(id, NULL, 0)),
		id->state == IB_CM_ESTABLISHED);

	failed_before = fk_failed();
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
	fk_settle(fk);
	if (!fk_tracked(fk)) {
		KUNIT_EXPECT_TRUE_MSG(fk->test, !failed_before && fk_failed(),
				      "destroy sent no DREQ, allocation %u",
				      s->nth);
		return;
	}
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, FK_PEER_ID);
	FK_STEP(s, "DREP", fk_sweep_receive(fk, &mad), !fk_tracked(fk));
}

/* The peer connects, and disconnects. */
static void fk_sweep_passive(struct fk_sweep *s)
{
	struct fk *fk = s->fk;
	unsigned int before = fk->nevents, dreps;
	union cm_kunit_msg mad, dreq;
	struct ib_cm_id *id;
	u32 local;

	fk_sweep_listen(s);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	FK_STEP(s, "REQ", fk_sweep_receive(fk, &mad),
		fk_got(fk, before, IB_CM_REQ_RECEIVED));
	id = fk_last_event(fk)->id;
	local = fk_local(id);
	FK_STEP(s, "REP", fk_sweep_settle(fk, fk_send_rep(id)),
		id->state == IB_CM_REP_SENT);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, local, FK_PEER_ID);
	FK_STEP(s, "RTU", fk_sweep_receive(fk, &mad),
		id->state == IB_CM_ESTABLISHED);
	fk_dreq(&dreq, local, FK_PEER_ID, FK_OUR_QPN);
	FK_STEP(s, "DREQ", fk_sweep_receive(fk, &dreq),
		id->state == IB_CM_DREQ_RCVD);
	/* Without a DREP the peer resends its DREQ; timewait answers it. */
	dreps = fk_sent_of(fk, CM_DREP_ATTR_ID);
	FK_STEP(s, "DREP",
		id->state == IB_CM_DREQ_RCVD ?
		fk_sweep_settle(fk, ib_send_cm_drep(id, NULL, 0)) :
		fk_sweep_receive(fk, &dreq),
		fk_sent_of(fk, CM_DREP_ATTR_ID) > dreps);
	KUNIT_EXPECT_EQ(fk->test, id->state, IB_CM_TIMEWAIT);
}

static void fk_sweep_sidr_active(struct fk_sweep *s)
{
	struct fk *fk = s->fk;
	unsigned int before = fk->nevents;
	struct ib_cm_id *id = NULL;
	union cm_kunit_msg mad;

	FK_STEP(s, "create", fk_sweep_create(fk, &id), id);
	FK_STEP(s, "SIDR_REQ", fk_send_sidr_req(id),
		id->state == IB_CM_SIDR_REQ_SENT);
	fk_sidr_rep(&mad, fk_local(id), IB_SIDR_SUCCESS, FK_PEER_QPN);
	FK_STEP(s, "SIDR_REP", fk_sweep_receive(fk, &mad),
		fk_got(fk, before, IB_CM_SIDR_REP_RECEIVED));
	KUNIT_EXPECT_EQ(fk->test, id->state, IB_CM_IDLE);
}

static void fk_sweep_sidr_passive(struct fk_sweep *s)
{
	struct ib_cm_sidr_rep_param rep = {
		.qp_num = FK_OUR_QPN, .qkey = 0x22222222,
		.status = IB_SIDR_SUCCESS,
	};
	struct fk *fk = s->fk;
	unsigned int before = fk->nevents;
	union cm_kunit_msg mad;
	struct ib_cm_id *id;

	fk_sweep_listen(s);
	fk_sidr_req(&mad, 0x77, FK_SID);
	FK_STEP(s, "SIDR_REQ", fk_sweep_receive(fk, &mad),
		fk_got(fk, before, IB_CM_SIDR_REQ_RECEIVED));
	id = fk_last_event(fk)->id;
	FK_STEP(s, "SIDR_REP", fk_sweep_settle(fk, ib_send_cm_sidr_rep(id, &rep)),
		fk_sent_of(fk, CM_SIDR_REP_ATTR_ID));
}

/* A REQ for no listener: the CM answers it alone, with a REJ. */
static void fk_sweep_no_listener(struct fk_sweep *s)
{
	struct fk *fk = s->fk;
	union cm_kunit_msg mad;

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	FK_STEP(s, "REQ", fk_sweep_receive(fk, &mad),
		fk_sent_of(fk, CM_REJ_ATTR_ID));
}

struct fk_sweep_case {
	const char *name;
	void (*run)(struct fk_sweep *s);
};

static const struct fk_sweep_case fk_sweep_cases[] = {
	{ "active connect and destroy", fk_sweep_active },
	{ "passive connect and DREQ", fk_sweep_passive },
	{ "SIDR, requesting", fk_sweep_sidr_active },
	{ "SIDR, answering", fk_sweep_sidr_passive },
	{ "REQ without a listener", fk_sweep_no_listener },
};

static void fk_sweep_desc(const struct fk_sweep_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_sweep, fk_sweep_cases, fk_sweep_desc);

/* Back to a fresh fake device, checking nothing was left. */
static void fk_sweep_reset(struct fk *fk)
{
	fk_clean(fk);
	fk->nowned = 0;
	fk->nsent = 0;
	fk->nevents = 0;
}

/* Bound on the allocations of one exchange, should the sweep not end. */
#define FK_SWEEP_MAX	200

/* failslab is the test's, or the test is skipped. */
static void fk_failslab_or_skip(struct kunit *test)
{
	int ret = fk_failslab_take(test);

	if (ret)
		kunit_skip(test, "needs failslab's debugfs attributes and ib_cm built in (%d)",
			   ret);
}

static void every_allocation_failure_is_survived(struct kunit *test)
{
	const struct fk_sweep_case *c = test->param_value;
	struct fk_sweep s = { .fk = test->priv };
	bool failed = true;

	fk_failslab_or_skip(test);
	for (s.nth = 1; failed && s.nth <= FK_SWEEP_MAX; s.nth++) {
		s.retries = 0;
		fk_fail_nth(s.nth);
		c->run(&s);
		failed = fk_fail_stop();
		/* One failure: one step tried again at most, none without. */
		KUNIT_EXPECT_LE_MSG(test, s.retries, failed ? 1U : 0U,
				    "allocation %u", s.nth);
		fk_sweep_reset(s.fk);
	}
	KUNIT_EXPECT_FALSE_MSG(test, failed, "more than %u allocations",
			       FK_SWEEP_MAX);
	/* It did fail some: the sweep is not empty. */
	KUNIT_EXPECT_GT(test, s.nth, 2U);
	kunit_info(test, "%u allocations failed in turn\n", s.nth - 2);
}

/* ---- adding a device ---- */

#define FK_DEV_PORTS	2

/*
 * A device of two ports for cm_add_device(), whose transport only opens
 * and closes ports: @fail_port fails to open (0: none does).
 */
struct fk_dev {
	struct kunit *test;
	struct ib_device dev;
	struct ib_port_data port_data[FK_DEV_PORTS + 1];
	unsigned long open;	/* bit n: port n is open */
	unsigned int opens;
	u32 fail_port;
};

static struct fk_dev *fk_dev_of(struct cm_port *port)
{
	return container_of(port->cm_dev->ib_device, struct fk_dev, dev);
}

static int fk_dev_open_port(struct cm_port *port)
{
	struct fk_dev *d = fk_dev_of(port);

	KUNIT_EXPECT_FALSE_MSG(d->test, test_bit(port->port_num, &d->open),
			       "port %u opened twice", port->port_num);
	if (port->port_num == d->fail_port)
		return -EBUSY;
	__set_bit(port->port_num, &d->open);
	d->opens++;
	return 0;
}

static void fk_dev_close_port(struct cm_port *port)
{
	struct fk_dev *d = fk_dev_of(port);

	KUNIT_EXPECT_TRUE_MSG(d->test, test_bit(port->port_num, &d->open),
			      "port %u closed but not open", port->port_num);
	__clear_bit(port->port_num, &d->open);
}

/* Listed while it is added: a path lookup finds none of its ports. */
static struct cm_port *fk_dev_port_of_path(struct cm_device *cm_dev,
					   struct sa_path_rec *path,
					   const struct ib_gid_attr *sgid_attr)
{
	return NULL;
}

static const struct cm_transport fk_dev_transport = {
	.port_of_path = fk_dev_port_of_path,
	.open_port = fk_dev_open_port,
	.close_port = fk_dev_close_port,
};

static void fk_dev_release(void *data)
{
	struct fk_dev *d = data;

	xa_destroy(&d->dev.client_data);
}

/* A fresh device whose ports have a CM if @cm; the client's slot is made. */
static struct fk_dev *fk_dev_new(struct kunit *test, bool cm)
{
	struct fk_dev *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	int ret;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->test = test;
	d->dev.phys_port_cnt = FK_DEV_PORTS;
	d->dev.port_data = d->port_data;
	for (i = 1; i <= FK_DEV_PORTS; i++)
		d->port_data[i].immutable.core_cap_flags =
			cm ? RDMA_CORE_PORT_IBA_IB : 0;
	xa_init_flags(&d->dev.client_data, XA_FLAGS_ALLOC);
	/* As ib_core does before it calls the client's add(). */
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&d->dev.client_data,
					      cm_client.client_id, NULL,
					      GFP_KERNEL)), 0);
	ret = kunit_add_action_or_reset(test, fk_dev_release, d);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return d;
}

static bool fk_dev_listed(struct fk_dev *d)
{
	struct cm_device *cm_dev;
	bool found = false;

	spin_lock_irq(&cm.lock);
	list_for_each_entry(cm_dev, &cm.devices, list)
		found |= cm_dev->ib_device == &d->dev;
	spin_unlock_irq(&cm.lock);
	return found;
}

/* cm_add_device() returned @ret: all of the device is there, or none. */
static void fk_dev_check(struct fk_dev *d, int ret)
{
	struct kunit *test = d->test;
	void *cm_dev = ib_get_client_data(&d->dev, &cm_client);

	if (!ret) {
		KUNIT_EXPECT_EQ(test, d->open, GENMASK(FK_DEV_PORTS, 1));
		KUNIT_EXPECT_TRUE(test, fk_dev_listed(d));
		KUNIT_ASSERT_NOT_NULL(test, cm_dev);
		cm_remove_one(&d->dev, cm_dev);
		/* As ib_core does once the client is removed. */
		ib_set_client_data(&d->dev, &cm_client, NULL);
	} else {
		KUNIT_EXPECT_NULL(test, cm_dev);
	}
	KUNIT_EXPECT_EQ_MSG(test, d->open, 0UL, "ports left open");
	KUNIT_EXPECT_FALSE(test, fk_dev_listed(d));
}

static void device_add_that_fails_at_a_port_closes_the_others(struct kunit *test)
{
	struct fk_dev *d = fk_dev_new(test, true);
	u32 port;

	for (port = 1; port <= FK_DEV_PORTS; port++) {
		d->fail_port = port;
		d->opens = 0;
		KUNIT_EXPECT_EQ(test, cm_add_device(&d->dev, &fk_dev_transport),
				-EBUSY);
		KUNIT_EXPECT_EQ(test, d->opens, port - 1);
		fk_dev_check(d, -EBUSY);
	}
	d->fail_port = 0;
	fk_dev_check(d, cm_add_device(&d->dev, &fk_dev_transport));
}

static void device_without_a_cm_port_is_not_added(struct kunit *test)
{
	struct fk_dev *d = fk_dev_new(test, false);

	KUNIT_EXPECT_EQ(test, cm_add_device(&d->dev, &fk_dev_transport),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, d->opens, 0U);
	fk_dev_check(d, -EOPNOTSUPP);
}

/*
 * The sweep of cm_add_device()'s allocations: the device's and each of
 * its ports' fail in turn.  A failure may also land where it is absorbed
 * (kmemleak's own objects, in the debug run): then the device is added.
 */
static void device_add_survives_every_allocation_failure(struct kunit *test)
{
	struct fk_dev *d = fk_dev_new(test, true);
	unsigned int nth, nomem = 0;
	bool failed = true;
	int ret;

	fk_failslab_or_skip(test);
	for (nth = 1; failed && nth <= FK_SWEEP_MAX; nth++) {
		fk_fail_nth(nth);
		ret = cm_add_device(&d->dev, &fk_dev_transport);
		failed = fk_fail_stop();
		KUNIT_EXPECT_TRUE_MSG(test, !ret || (failed && ret == -ENOMEM),
				      "allocation %u: %d", nth, ret);
		nomem += ret == -ENOMEM;
		fk_dev_check(d, ret);
	}
	KUNIT_EXPECT_FALSE(test, failed);
	KUNIT_EXPECT_EQ(test, nomem, FK_DEV_PORTS + 1U);
}

static struct kunit_case fk_fault_cases[] = {
	KUNIT_CASE_PARAM(every_allocation_failure_is_survived,
			 fk_sweep_gen_params),
	KUNIT_CASE(device_add_that_fails_at_a_port_closes_the_others),
	KUNIT_CASE(device_without_a_cm_port_is_not_added),
	KUNIT_CASE(device_add_survives_every_allocation_failure),
	{}
};

static struct kunit_suite fk_fault_suite = {
	.name = "ib_cm_alloc_faults",
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_fault_cases,
};

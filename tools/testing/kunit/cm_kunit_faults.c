// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_alloc_faults: every allocation of an exchange fails once
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
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>

#if IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) && \
	IS_ENABLED(CONFIG_FAILSLAB) && !defined(MODULE)
#define FK_SWEEP 1
#endif

#ifdef FK_SWEEP
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
	{ .name = "active connect and destroy", .run = fk_sweep_active },
	{ .name = "passive connect and DREQ", .run = fk_sweep_passive },
	{ .name = "SIDR, requesting", .run = fk_sweep_sidr_active },
	{ .name = "SIDR, answering", .run = fk_sweep_sidr_passive },
	{ .name = "REQ without a listener", .run = fk_sweep_no_listener },
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
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_fault_cases,
};

kunit_test_suite(fk_fault_suite);

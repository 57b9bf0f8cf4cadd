// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_listen: the listen table
 *
 * Ids from cm_kunit_ids.c.
 */

#include <kunit/test.h>

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

/*
 * What a REQ arriving at the moment its listener enters the table finds:
 * the listener, and whether it is one (cm_queue_found() reads the flag
 * without a lock to track the REQ as waiting, for a REJ TIMEOUT behind it).
 */
static struct cm_id_priv *cm_kunit_listen_seen;
static bool cm_kunit_listen_seen_flag;

static int cm_kunit_insert_and_look(struct cm_id_priv *p)
{
	int ret;

	kunit_deactivate_static_stub(kunit_get_current_test(),
				     cm_insert_listen);
	ret = cm_insert_listen(p);
	cm_kunit_listen_seen = cm_find_listen(p->id.device, p->id.service_id);
	if (cm_kunit_listen_seen)
		cm_kunit_listen_seen_flag = cm_kunit_listen_seen->is_listener;
	return ret;
}

static void listener_is_marked_before_it_can_be_found(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	cm_kunit_listen_seen = NULL;
	cm_kunit_listen_seen_flag = false;
	kunit_activate_static_stub(test, cm_insert_listen,
				   cm_kunit_insert_and_look);
	KUNIT_EXPECT_EQ(test, ib_cm_listen(&p->id, cpu_to_be64(CM_KUNIT_SID)),
			0);
	KUNIT_EXPECT_PTR_EQ(test, cm_kunit_listen_seen, p);
	KUNIT_EXPECT_TRUE_MSG(test, cm_kunit_listen_seen_flag,
			      "findable before it is marked a listener");
	ib_destroy_cm_id(&p->id);
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
	KUNIT_CASE(listener_is_marked_before_it_can_be_found),
	{}
};

static struct kunit_suite cm_kunit_listen_suite = {
	.name = "ib_cm_listen",
	.init = cm_kunit_ctx_init,
	.exit = cm_kunit_listen_exit,
	.test_cases = cm_kunit_listen_cases,
};

kunit_test_suite(cm_kunit_listen_suite);

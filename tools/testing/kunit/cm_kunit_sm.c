// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_state_machine: the transition tables and cm_change_state()
 *
 * Ids from cm_kunit_ids.c.
 */

#include <kunit/test.h>

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
	{ .desc = "IDLE -> ESTABLISHED on an RTU", .from = IB_CM_IDLE,
	  .to = IB_CM_ESTABLISHED, .cause = CM_RECV_RTU },
	{ .desc = "ESTABLISHED -> REQ_SENT on a REQ", .from = IB_CM_ESTABLISHED,
	  .to = IB_CM_REQ_SENT, .cause = CM_SEND_REQ },
	{ .desc = "TIMEWAIT -> IDLE on destroy", .from = IB_CM_TIMEWAIT,
	  .to = IB_CM_IDLE, .cause = CM_DESTROY },
	{ .desc = "REQ_SENT -> IDLE for a DREP", .from = IB_CM_REQ_SENT,
	  .to = IB_CM_IDLE, .cause = CM_RECV_DREP },
	{ .desc = "LISTEN -> REQ_RCVD on a REQ", .from = IB_CM_LISTEN,
	  .to = IB_CM_REQ_RCVD, .cause = CM_RECV_REQ },
	{ .desc = "LAP_RCVD -> LAP_IDLE on an APR", .lap = true,
	  .from = IB_CM_LAP_RCVD, .to = IB_CM_LAP_IDLE, .cause = CM_RECV_APR },
	{ .desc = "LAP_UNINIT -> LAP_SENT", .lap = true,
	  .from = IB_CM_LAP_UNINIT, .to = IB_CM_LAP_SENT,
	  .cause = CM_RECV_LAP },
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

kunit_test_suite(cm_kunit_sm_suite);

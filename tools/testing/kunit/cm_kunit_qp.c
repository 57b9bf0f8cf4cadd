// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_qp_attr: QP attributes for INIT, RTR and RTS
 *
 * Ids from cm_kunit_ids.c.
 */

#include <kunit/test.h>

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
	{ .desc = "RC INIT", .qp_type = IB_QPT_RC, .want = IB_QPS_INIT,
	  .responder_resources = 4, .mask = CM_KUNIT_INIT_MASK },
	{ .desc = "RC INIT without responder resources", .qp_type = IB_QPT_RC,
	  .want = IB_QPS_INIT, .mask = CM_KUNIT_INIT_MASK },
	{ .desc = "UC INIT", .qp_type = IB_QPT_UC, .want = IB_QPS_INIT,
	  .mask = CM_KUNIT_INIT_MASK },
	{ .desc = "XRC target INIT", .qp_type = IB_QPT_XRC_TGT,
	  .want = IB_QPS_INIT, .responder_resources = 4,
	  .mask = CM_KUNIT_INIT_MASK },
	{ .desc = "RC RTR", .qp_type = IB_QPT_RC, .want = IB_QPS_RTR,
	  .responder_resources = 4,
	  .mask = CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ .desc = "RC RTR with alternate path", .qp_type = IB_QPT_RC,
	  .want = IB_QPS_RTR, .alt = true, .responder_resources = 4,
	  .mask = CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD | IB_QP_ALT_PATH },
	{ .desc = "RC RTR with data path DLID", .qp_type = IB_QPT_RC,
	  .want = IB_QPS_RTR, .responder_resources = 4, .dlid_datapath = 0x99,
	  .mask = CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ .desc = "RC RTR with permissive data path DLID", .qp_type = IB_QPT_RC,
	  .want = IB_QPS_RTR, .responder_resources = 4, .dlid_datapath = 0xffff,
	  .mask = CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ .desc = "UC RTR", .qp_type = IB_QPT_UC, .want = IB_QPS_RTR,
	  .responder_resources = 4, .mask = CM_KUNIT_RTR_MASK },
	{ .desc = "UC RTR with alternate path", .qp_type = IB_QPT_UC,
	  .want = IB_QPS_RTR, .alt = true, .responder_resources = 4,
	  .mask = CM_KUNIT_RTR_MASK | IB_QP_ALT_PATH },
	{ .desc = "XRC target RTR", .qp_type = IB_QPT_XRC_TGT,
	  .want = IB_QPS_RTR, .responder_resources = 4,
	  .mask = CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD },
	{ .desc = "XRC initiator RTR", .qp_type = IB_QPT_XRC_INI,
	  .want = IB_QPS_RTR, .responder_resources = 4,
	  .mask = CM_KUNIT_RTR_MASK },
	{ .desc = "XRC target RTR with alternate path",
	  .qp_type = IB_QPT_XRC_TGT, .want = IB_QPS_RTR, .alt = true,
	  .responder_resources = 4,
	  .mask = CM_KUNIT_RTR_MASK | CM_KUNIT_RTR_RD | IB_QP_ALT_PATH },
	{ .desc = "RC RTS", .qp_type = IB_QPT_RC, .want = IB_QPS_RTS,
	  .responder_resources = 4,
	  .mask = CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC },
	{ .desc = "RC RTS with alternate path", .qp_type = IB_QPT_RC,
	  .want = IB_QPS_RTS, .alt = true, .responder_resources = 4,
	  .mask = CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC | IB_QP_PATH_MIG_STATE },
	{ .desc = "UC RTS", .qp_type = IB_QPT_UC, .want = IB_QPS_RTS,
	  .responder_resources = 4, .mask = CM_KUNIT_RTS_MASK },
	{ .desc = "UC RTS with alternate path", .qp_type = IB_QPT_UC,
	  .want = IB_QPS_RTS, .alt = true, .responder_resources = 4,
	  .mask = CM_KUNIT_RTS_MASK | IB_QP_PATH_MIG_STATE },
	{ .desc = "XRC target RTS", .qp_type = IB_QPT_XRC_TGT,
	  .want = IB_QPS_RTS, .responder_resources = 4,
	  .mask = CM_KUNIT_RTS_MASK | IB_QP_TIMEOUT },
	{ .desc = "XRC initiator RTS", .qp_type = IB_QPT_XRC_INI,
	  .want = IB_QPS_RTS, .responder_resources = 4,
	  .mask = CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC },
	{ .desc = "XRC initiator RTS with alternate path",
	  .qp_type = IB_QPT_XRC_INI, .want = IB_QPS_RTS, .alt = true,
	  .responder_resources = 4,
	  .mask = CM_KUNIT_RTS_MASK | CM_KUNIT_RTS_RC | IB_QP_PATH_MIG_STATE },
	{ .desc = "RC RTS after a LAP loads only the alternate path",
	  .qp_type = IB_QPT_RC, .want = IB_QPS_RTS, .alt = true,
	  .lap_state = IB_CM_LAP_IDLE, .responder_resources = 4,
	  .mask = IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE },
	{ .desc = "RC RTS while a LAP is answered", .qp_type = IB_QPT_RC,
	  .want = IB_QPS_RTS, .alt = true, .lap_state = IB_CM_MRA_LAP_SENT,
	  .responder_resources = 4,
	  .mask = IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE },
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

kunit_test_suite(cm_kunit_qp_suite);

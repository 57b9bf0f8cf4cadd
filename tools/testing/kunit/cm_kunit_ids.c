// SPDX-License-Identifier: GPL-2.0
/*
 * Ids without a transport: the harness of the suites up to ib_cm_hostile
 *
 * A zeroed struct ib_device serves as the device: ib_create_cm_id() and
 * the listen table only store and compare its address, and the INIT
 * attributes read its (zero) capability flags.  A cm_port of a cm_device
 * without MAD agents stands for a port: cm_alloc_msg() answers -ENODEV
 * for it, which shows that a call got as far as building a message, and
 * nothing is ever sent.  Such ports are set into an id by hand (without
 * the device reference cm_av_set_port() would take) and taken out again
 * by cm_kunit_put_down() before the id is destroyed.
 *
 * Not a suite: the listen, state machine, API misuse and QP attribute
 * suites create their ids with these helpers.
 */

#include <kunit/test.h>
#include <linux/delay.h>

struct cm_kunit_ctx {
	struct ib_device *dev[2];
	struct cm_device *cm_dev;
	struct cm_port *port[2];
};

static int cm_kunit_handler(struct ib_cm_id *cm_id,
			    const struct ib_cm_event *event)
{
	return 0;
}

static int cm_kunit_other_handler(struct ib_cm_id *cm_id,
				  const struct ib_cm_event *event)
{
	return 0;
}

static int cm_kunit_ctx_init(struct kunit *test)
{
	struct cm_kunit_ctx *ctx;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->cm_dev = kunit_kzalloc(test, struct_size(ctx->cm_dev, port, 2),
				    GFP_KERNEL);
	if (!ctx->cm_dev)
		return -ENOMEM;
	cm_device_init(ctx->cm_dev);
	ctx->cm_dev->tp = &cm_ib_transport;
	ctx->cm_dev->nports = 2;
	for (i = 0; i < 2; i++) {
		ctx->dev[i] = kunit_kzalloc(test, sizeof(*ctx->dev[i]),
					    GFP_KERNEL);
		ctx->port[i] = kunit_kzalloc(test, sizeof(*ctx->port[i]),
					     GFP_KERNEL);
		if (!ctx->dev[i] || !ctx->port[i])
			return -ENOMEM;
		ctx->port[i]->cm_dev = ctx->cm_dev;
		ctx->port[i]->port_num = i + 1;
	}
	ctx->cm_dev->ib_device = ctx->dev[0];
	test->priv = ctx;
	return 0;
}

static struct cm_id_priv *cm_kunit_new_id(struct kunit *test,
					  struct ib_device *dev)
{
	struct ib_cm_id *id = ib_create_cm_id(dev, cm_kunit_handler, NULL);

	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(id));
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	return to_priv(id);
}

/* Undo what a test set by hand, so that destroying sends nothing. */
static void cm_kunit_put_down(struct cm_id_priv *p)
{
	spin_lock_irq(&p->lock);
	p->id.state = IB_CM_IDLE;
	p->id.lap_state = IB_CM_LAP_UNINIT;
	p->av.port = NULL;
	p->alt_av.port = NULL;
	memset(&p->av.ah_attr, 0, sizeof(p->av.ah_attr));
	memset(&p->alt_av.ah_attr, 0, sizeof(p->alt_av.ah_attr));
	spin_unlock_irq(&p->lock);
	ib_destroy_cm_id(&p->id);
}

/* The listener for (@dev, @sid), for comparison only: not referenced. */
static struct cm_id_priv *cm_kunit_find_listen(struct ib_device *dev,
					       u64 sid)
{
	struct cm_id_priv *p;

	spin_lock_irq(&cm.lock);
	p = cm_find_listen(dev, cpu_to_be64(sid));
	spin_unlock_irq(&cm.lock);
	return p;
}

/*
 * How many listeners on @dev the table holds.  A walk that meets a resize
 * may miss entries still being moved, so it is repeated until one does not.
 */
static unsigned int cm_kunit_listeners_on(struct ib_device *dev)
{
	struct rhashtable_iter iter;
	struct cm_id_priv *p;
	unsigned int count, tries;
	bool resized;

	for (tries = 0; tries < 100; tries++) {
		count = 0;
		resized = false;
		rhashtable_walk_enter(&cm.listeners, &iter);
		rhashtable_walk_start(&iter);
		while ((p = rhashtable_walk_next(&iter))) {
			if (IS_ERR(p))
				resized = true;
			else if (p->id.device == dev)
				count++;
		}
		rhashtable_walk_stop(&iter);
		rhashtable_walk_exit(&iter);
		if (!resized)
			break;
		msleep(20);
	}
	return count;
}

/* Every test of the listen suite must leave the table as it found it. */
static void cm_kunit_listen_exit(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[0]), 0U);
	KUNIT_EXPECT_EQ(test, cm_kunit_listeners_on(ctx->dev[1]), 0U);
}

/* State names (cm.c's) for parameter descriptions. */
static void cm_kunit_state_desc(const enum ib_cm_state *s, char *desc)
{
	strscpy(desc, cm_state_names[*s], KUNIT_PARAM_DESC_SIZE);
}

# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Options of the [conductor] group: the cyborg-conductor service."""

from oslo_config import cfg

conductor_group = cfg.OptGroup(
    'conductor',
    title='Conductor options',
    help='Options for the cyborg-conductor service.')

conductor_opts = [
    cfg.IntOpt(
        'workers',
        default=1,
        min=1,
        help="""
Number of worker processes of one cyborg-conductor service.

One worker runs in the command's own process. Its RPC requests and binds
run on threads, and mostly wait on the database, Placement, Nova and the
agents, so one process keeps up with many hosts; each more worker costs
about 70 MiB of memory and its own database connections. Raise it where
the conductor's CPU is the limit (a worker uses at most one CPU). Several
conductor services, on one host or several, can run side by side as well;
they share the work through the message queue and the database.
"""),
    cfg.IntOpt(
        'reconcile_interval',
        default=300,
        min=1,
        help="""
Seconds between two Placement reconciliation passes of a host.

A pass compares the devices a host's agent last reported with the resource
providers, inventories and traits Cyborg owns in Placement, and repairs any
drift (a deleted provider, lost traits, changed inventory). A pass that
finds nothing to change writes nothing. Lower it to repair drift sooner;
every pass reads each host's providers from Placement. Checked by the
periodic tasks, so it takes effect at the granularity of
``[DEFAULT] periodic_interval``.

Related options:

* ``[DEFAULT] periodic_interval``
* ``host_lease_seconds``
* ``[agent] full_report_every``
"""),
    cfg.IntOpt(
        'host_lease_seconds',
        default=120,
        min=1,
        help="""
Seconds one conductor owns the inventory reconciliation of a host.

Before a conductor updates the inventory of a host, in the database and in
Placement, it takes a lease on that host, so two conductors never update
the same host at once. A conductor that stops without releasing its lease
blocks the host until the lease expires, when another conductor takes over.
It must be longer than the slowest reconciliation of one host, otherwise a
second conductor may start while the first is still working; raise it for
hosts with very many devices or a slow Placement.

Related options:

* ``reconcile_interval``
"""),
    cfg.IntOpt(
        'placement_max_retries',
        default=5,
        min=0,
        help="""
Times a Placement update is retried after a conflict or connection error.

Placement rejects an update with 409 Conflict when the resource provider
changed since it was read (its generation moved on, for example because
Nova updated it at the same time); the conductor then reads it again and
retries. Connection errors are retried the same way. After the last retry
the operation fails and is tried again by the next reconciliation pass.
Raise it for busy clouds where conflicts are frequent.

Related options:

* ``[placement]`` options, which say how Placement is reached
"""),
    cfg.IntOpt(
        'nova_event_timeout',
        default=300,
        min=1,
        help="""
Seconds the conductor keeps trying to tell Nova that a bind ended.

The conductor tells Nova through its external events API that each
accelerator request of an instance is bound or failed to bind. The event
is stored with the request's new state and sent again, with exponential
back-off up to 30 seconds, while Nova cannot be reached or fails, by this
conductor or, if it stops, by another. Past this time Nova has stopped
waiting and the event is dropped with an error in the log. Keep it equal
to Nova's ``[DEFAULT] arq_binding_timeout`` (300 seconds by default).

Related options:

* ``[nova]`` options, which say how Nova is reached
"""),
    cfg.IntOpt(
        'quarantine_quiet_period',
        default=300,
        min=0,
        help="""
Seconds a quarantined device must stay healthy before it is released.

A device its host reports unhealthy is quarantined: its whole inventory is
reserved in Placement, so no new accelerator request lands on it, while the
instances that hold its accelerators keep them. Once the host reports it
healthy again and it stays so this long, the quarantine ends by itself; an
operator may end it sooner (``POST /v2/devices/{uuid}/release``). Raise it
where devices recover and fail again in bursts; 0 releases a device on the
first healthy report. Checked on each report and by the periodic tasks, so
it takes effect at the granularity of ``[DEFAULT] periodic_interval``.

Related options:

* ``[agent] report_interval``
* ``[DEFAULT] periodic_interval``
"""),
    cfg.StrOpt(
        'agent_transport_url',
        secret=True,
        help="""
Transport URL on which conductors meet the agents, if not ``[DEFAULT]
transport_url``.

``{host}`` in it is replaced by each host's name (its compute node's name
in Placement), so that each host's agent has a RabbitMQ virtual host of
its own, e.g. ``rabbit://cyborg:secret@ctl:5672/cyborg-{host}``: set each
agent's ``[DEFAULT] transport_url`` to its host's virtual host, with a
broker user allowed only there. A compute host whose broker credentials
leak can then reach nothing but its own agent's topic: not the API's
calls on ``cyborg-conductor``, nor other hosts' reports. Without
``{host}`` all agents share that one virtual host, apart from the API's
topic. The conductor keeps one connection per host. Unset, agents use
``[DEFAULT] transport_url``, as openstack-cyborg 17.0.0 did. Set it on
conductors only, once every agent runs this release with ``[upgrade_levels]
conductor`` unset; see the security guide.
"""),
    cfg.BoolOpt(
        'serve_agents_on_shared_topic',
        default=True,
        help="""
Serve agents' reports on the shared ``cyborg-conductor`` topic as well.

Agents of this release send ``report_host`` and ``compute_node_rp`` on a
topic of their host's own (``cyborg-conductor-agent.<host>``), where the
conductor takes the host from the topic, refuses a report that names
another host and ignores the identity the message claims. Agents of
openstack-cyborg 17.0.0 and of the release before this one, and agents
whose ``[upgrade_levels] conductor`` is below 1.4, still send them on
``cyborg-conductor``, the topic of the API's calls. Set this to False once
every agent is upgraded and uncapped: the conductor then refuses report
calls on the shared topic, so that a compute host that may publish there
cannot report for another host.

Related options:

* ``[upgrade_levels] conductor``
"""),
    cfg.BoolOpt(
        'cyborg17_agents_glance_token',
        default=False,
        help="""
Send openstack-cyborg 17.0.0's agents a token for Glance when they program.

During a rolling upgrade, an FPGA on a compute host that still runs
openstack-cyborg 17.0.0's ``cyborg-agent`` is programmed by that agent,
which downloads the bitstream from Glance itself with the token of the
request it is sent. Cyborg sends no token on the message bus, so by default
such a bind fails, saying to upgrade the agent. Set this to True for the
hours of the upgrade to program there anyway: each ``fpga_program`` call to
a 17.0.0 agent then carries a token of the ``[glance]`` credentials (never a
user's), which that compute host can read and use until it expires. The
conductor has already checked the image (active, owned by a trusted
project, no shell). Leave it False, the default, once every agent is
upgraded; Cyborg's own agents never receive a token.

Related options:

* ``[glance]`` credentials
* ``[fpga] trusted_image_owners``
"""),
]


def register_opts(conf):
    conf.register_group(conductor_group)
    conf.register_opts(conductor_opts, group=conductor_group)


def list_opts():
    return {conductor_group: conductor_opts}

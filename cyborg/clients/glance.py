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
"""A python-glanceclient (image API v2) configured by ``[glance]``.

Authentication, TLS and the endpoint come from keystoneauth's options in
that group, so no cloud name or credential appears in code. Glance is
always asked as the service (those credentials), whoever made the request
that needs a bitstream: see :func:`get_client`.
"""

from glanceclient import client as glance_client

from cyborg.clients import keystone
from cyborg.conf import glance as glance_conf

GROUP = glance_conf.glance_group.name


def get_client(conf, context=None):
    """A Glance v2 client acting as the service itself.

    Always with the credentials of ``[glance]``, never a user's token:
    which images an FPGA may be programmed with must not depend on who
    asked for it (a user sees, and may upload, images the operator never
    vetted), nor on whether a bind runs for its request or resumes after
    a restart. ``context`` only lends its request id to Glance's logs.
    """
    adapter = keystone.get_adapter(conf, GROUP)
    # The adapter finds the endpoint (endpoint_override, or the catalog
    # with the configured interfaces and region) once for the client; the
    # client is an adapter of its own, so it takes the retries from ours.
    endpoint = adapter.get_endpoint()
    return glance_client.Client(
        '2', session=adapter.session, endpoint_override=endpoint,
        auth=adapter.auth, connect_retries=adapter.connect_retries,
        global_request_id=getattr(context, 'global_id', None))


def project_id(conf):
    """The project of ``[glance]``'s credentials, or None without any.

    Images this project owns are the ones the operator trusts unless
    ``[fpga] trusted_image_owners`` says otherwise.
    """
    adapter = keystone.get_adapter(conf, GROUP)
    if adapter.auth is None:
        return None
    return adapter.get_project_id()


def service_token(conf):
    """A token of ``[glance]``'s credentials, or None without any.

    Only for openstack-cyborg 17.0.0's agents, which download bitstreams
    themselves (``[conductor] cyborg17_agents_glance_token``).
    """
    adapter = keystone.get_adapter(conf, GROUP)
    if adapter.auth is None:
        return None
    return adapter.get_token()

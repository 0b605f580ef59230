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
"""Nova's own Cyborg client, driven over stdin and stdout.

Run by ``test_nova_client`` with the Python of the virtualenv that
``tools/setup-client-venvs.sh`` makes (the ``nova`` package, whose
dependencies conflict with Cyborg's): ``python nova_client_driver.py
NOVA_CONF``. The client authenticates as Nova does, with the user's token
from the request context (and a service token when the configuration
asks for one), and finds Cyborg through the file's ``[cyborg]`` options.

Each line on stdin is a JSON call ``{"method": NAME, "args": [...],
"kwargs": {...}}`` of a ``nova.accelerator.cyborg._CyborgClient`` method,
or of ``request_groups`` (:func:`request_groups`). Each answer on stdout
is ``{"result": ...}``, or ``{"error": CLASS, "message": ..., "arqs":
[...]}`` for a Nova exception.
"""

import json
import sys
import types

from nova.accelerator import cyborg
import nova.conf
from nova import context as nova_context
from nova import exception
from nova import objects
from nova.scheduler import utils as scheduler_utils

CONF = nova.conf.CONF
PROJECT = 'b5c8b2a4-3bfc-4f1a-9d77-5b8c0a1c2d3e'


def request_groups(ctx, profile_name):
    """What Nova's API makes of a flavor's ``accel:device_profile``.

    :returns: the ``RequestGroup`` objects as dicts, and the
        ``GET /allocation_candidates`` query string Nova's scheduler sends
        for a small flavor with them.
    """
    groups = cyborg.get_device_profile_request_groups(ctx, profile_name)
    flavor = objects.Flavor(
        vcpus=1, memory_mb=512, root_gb=1, ephemeral_gb=0, swap=0,
        extra_specs={'accel:device_profile': profile_name})
    spec = objects.RequestSpec(
        flavor=flavor, image=objects.ImageMeta.from_dict({}),
        requested_resources=groups, is_bfv=False,
        request_level_params=objects.RequestLevelParams())
    query = scheduler_utils.ResourceRequest.from_request_spec(spec)
    return {'groups': [{'requester_id': g.requester_id,
                        'resources': g.resources,
                        'required_traits': sorted(g.required_traits),
                        'forbidden_traits': sorted(g.forbidden_traits)}
                       for g in groups],
            'query': query.to_querystring()}


def call(ctx, client, method, args, kwargs):
    if method == 'request_groups':
        return request_groups(ctx, *args, **kwargs)
    if method == 'get_arq_uuids_for_instance':
        # Nova passes its Instance; only the uuid is read.
        args = [types.SimpleNamespace(uuid=args[0])]
    return getattr(client, method)(*args, **kwargs)


def main(config_file):
    CONF(['--config-file', config_file], project='nova',
         default_config_files=[])
    objects.register_all()
    ctx = nova_context.RequestContext(
        user_id='nova-test-user', project_id=PROJECT,
        auth_token='nova-test-user-token')
    for line in sys.stdin:
        request = json.loads(line)
        # A client per call, as Nova's services make one per operation.
        client = cyborg.get_client(ctx)
        try:
            answer = {'result': call(ctx, client, request['method'],
                                     request.get('args', []),
                                     request.get('kwargs', {}))}
        except exception.NovaException as e:
            answer = {'error': type(e).__name__, 'message': str(e),
                      'arqs': sorted(getattr(e, 'arqs', None) or ())}
        print(json.dumps(answer), flush=True)


if __name__ == '__main__':
    main(sys.argv[1])

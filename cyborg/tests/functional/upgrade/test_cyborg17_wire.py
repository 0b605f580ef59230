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
"""The wire of openstack-cyborg 17.0.0's agent, read from its source.

Its report objects must have the names, versions and fields that
:mod:`cyborg.objects.cyborg17_report` registers, and
:mod:`cyborg.agent.cyborg17_rpcapi` must send each of its agent's methods
the arguments its manager takes. The source is read, not imported: it is
another package named ``cyborg``.
"""

import ast
import inspect

import oslo_messaging as messaging
from oslo_utils import uuidutils

from cyborg.agent import cyborg17_rpcapi
from cyborg.agent import manager as agent_manager
from cyborg.agent import rpcapi as agent_rpcapi
from cyborg.common import service
from cyborg.objects import base as objects_base
from cyborg.objects import cyborg17_report  # noqa: F401 (registers)
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.db import test_cyborg17


def _source(path):
    found = sorted(test_cyborg17.VENV.glob(
        'lib/python3*/site-packages/cyborg/' + path))
    return ast.parse(found[0].read_text()) if found else None


def _classes(tree):
    return {node.name: node for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)}


def _assigned(cls, name):
    for node in cls.body:
        if (isinstance(node, ast.Assign) and
                getattr(node.targets[0], 'id', None) == name):
            return node.value
    return None


class _Recorder:
    """17.0.0's agent methods, recording the arguments they are sent."""

    target = messaging.Target(version='1.0')

    def __init__(self):
        self.sent = {}

    def _record(self, method, kwargs):
        self.sent[method] = set(kwargs)

    def fpga_program(self, context, **kwargs):
        self._record('fpga_program', kwargs)
        return True

    def create_vgpu_mdev(self, context, **kwargs):
        self._record('create_vgpu_mdev', kwargs)

    def remove_vgpu_mdev(self, context, **kwargs):
        self._record('remove_vgpu_mdev', kwargs)


class TestCyborg17Wire(base.TestCase):

    def setUp(self):
        super().setUp()
        if _source('agent/manager.py') is None:
            self.skipTest('needs %s: run tools/setup-client-venvs.sh'
                          % test_cyborg17.VENV)

    def test_report_objects(self):
        registered = objects_base.CyborgObjectRegistry.obj_classes()
        for module in ('device', 'deployable', 'attribute',
                       'controlpath_id', 'attach_handle'):
            tree = _source('objects/driver_objects/driver_%s.py' % module)
            for name, cls in _classes(tree).items():
                ours = registered[name][0]
                self.assertEqual(ast.literal_eval(_assigned(cls, 'VERSION')),
                                 ours.VERSION, name)
                fields = _assigned(cls, 'fields')
                self.assertEqual(
                    {ast.literal_eval(k) for k in fields.keys},
                    set(ours.fields), name)

    def test_agent_methods_get_their_arguments(self):
        self.useFixture(cyborg_fixtures.RPC())
        manager = _classes(_source('agent/manager.py'))['AgentManager']
        takes = {node.name: {a.arg for a in node.args.args[2:]}
                 for node in manager.body
                 if isinstance(node, ast.FunctionDef)}
        recorder = _Recorder()
        server = service.RPCService(
            recorder, agent_rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host='host-17')
        server.start()
        self.addCleanup(server.stop)
        client = cyborg17_rpcapi.AgentAPI()
        client.fpga_program(self.context, 'host-17', {'cpid_type': 'PCI'},
                            uuidutils.generate_uuid(), 'intel')
        for method in ('create_vgpu_mdev', 'remove_vgpu_mdev'):
            getattr(client, method)(self.context, 'host-17', '0000:d8:00.0',
                                    'nvidia-222', uuidutils.generate_uuid())
        for method, sent in recorder.sent.items():
            self.assertEqual(takes[method], sent, method)
        self.assertEqual(3, len(recorder.sent))

    def test_this_agent_takes_its_methods_arguments(self):
        # Calls left in 17.0.0's agent's queue reach this release's agent
        # where it took the host over under the same name.
        theirs = _classes(_source('agent/manager.py'))['AgentManager']
        takes = {node.name: [a.arg for a in node.args.args[1:]]
                 for node in theirs.body
                 if isinstance(node, ast.FunctionDef)}
        for name in ('fpga_program', 'create_vgpu_mdev', 'remove_vgpu_mdev'):
            ours = inspect.signature(getattr(agent_manager.AgentManager,
                                             name))
            self.assertEqual(takes[name], list(ours.parameters)[1:], name)

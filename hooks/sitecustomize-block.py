# >>> sitewarden guard >>> added by `sitewarden install --hook sitecustomize`; `sitewarden uninstall` removes it
try:
    __import__('sitewarden').activate()
except Exception:
    pass
# <<< sitewarden guard <<<
